package dev.fencing.docs.shedlock;

import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.springframework.scheduling.annotation.Scheduled;

/** docs/issuers.md, ShedLock jobs: the job and the fenced repository it writes. */
public class InterestJob {

    /** The repository side: refuses a write whose token is older than one it has accepted. */
    public static class Accounts {
        private final List<Long> tokens = new CopyOnWriteArrayList<>();

        /** The tokens the writes were accepted with (a method: the bean is a proxy). */
        public List<Long> tokens() {
            return tokens;
        }

        @Fenced(resource = "accounts")
        public void addInterest() {
            tokens.add(FencingContext.current("accounts").value());
        }
    }

    private final Accounts accounts;

    public InterestJob(Accounts accounts) {
        this.accounts = accounts;
    }

    // tag::job[]
    @Scheduled(cron = "${interest.cron:0 0 2 * * *}")
    @SchedulerLock(name = "nightly-interest", lockAtMostFor = "PT10M")
    public void run() {
        accounts.addInterest();   // @Fenced(resource = "accounts"): refused once a newer run has written
    }
    // end::job[]
}
