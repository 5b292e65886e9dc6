package dev.fencing.docs.integration;

import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.integration.FencedCandidate;
import dev.fencing.integration.FencedLockRegistry;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.spring.EnableFencing;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.UUID;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.leader.Context;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

/**
 * docs/propagation.md, "Spring Integration locks and leader election": a FencedLockRegistry, a leader initiator over
 * it, and a leader whose work runs on its own thread with its term's token. LeaderElectionConfigTest starts it with an
 * in-memory issuer and store.
 */
@Configuration
@EnableFencing
public class LeaderElectionConfig {

    @Bean
    InMemoryFenceStore fenceStore() {
        return new InMemoryFenceStore();
    }

    @Bean
    Reports reports() {
        return new Reports();
    }

    @Bean(destroyMethod = "stopTerm")
    ReportWriter reportWriter(Reports reports) {
        return new ReportWriter(reports);
    }

    // tag::registry[]
    @Bean                                                    // probes the issuer's lock service at startup
    FencedLockRegistry lockRegistry(TokenIssuer tokenIssuer) {
        return new FencedLockRegistry(tokenIssuer, "leader:"); // key "report-writer" -> resource "leader:report-writer"
    }

    @Bean
    LockRegistryLeaderInitiator leaderInitiator(FencedLockRegistry lockRegistry, ReportWriter writer) {
        String node = UUID.randomUUID().toString();             // one id per process: not a constant two would share
        return new LockRegistryLeaderInitiator(lockRegistry, new FencedCandidate(lockRegistry, node, "report-writer") {
            @Override
            protected void onGranted(Context context, FencingToken token) {
                writer.startTerm(token);                     // this term's token, handed to the leader's work
            }

            @Override
            public void onRevoked(Context context) {
                writer.stopTerm();
            }
        });
    }
    // end::registry[]

    /** The leader's work: publishes reports on a thread of its own. */
    public static class ReportWriter {
        private static final System.Logger LOG = System.getLogger(ReportWriter.class.getName());
        private final Reports reports;
        private volatile ExecutorService worker;
        volatile Future<Object> term;

        ReportWriter(Reports reports) {
            this.reports = reports;
        }

        // tag::leader[]
        void startTerm(FencingToken token) {
            worker = Executors.newSingleThreadExecutor();
            term = worker.submit(() -> {
                try (FencingScope scope = FencingContext.bind(token)) {  // bound for the whole term, never replaced
                    while (true) {
                        try {
                            reports.publish("daily");                   // checked: refused once a newer leader wrote
                        } catch (RuntimeException e) {                  // refused (onRevoked follows) or an outage:
                            LOG.log(System.Logger.Level.WARNING, "Report not published", e);  // said, and tried again
                        }
                        TimeUnit.MINUTES.sleep(1);                      // until stopTerm() interrupts it
                    }
                }
            });
        }

        void stopTerm() {                                 // onRevoked, and at shutdown (@Bean destroyMethod)
            ExecutorService current = worker;
            if (current != null) {
                current.shutdownNow();                                  // interrupts the term's work
            }
        }
        // end::leader[]
    }

    /** The resource side. */
    public static class Reports {
        private final List<String> published = new CopyOnWriteArrayList<>();

        @Fenced(resource = "leader", key = "'report-writer'")
        public void publish(String name) {
            published.add(name + "@" + FencingContext.current("leader:report-writer").value());
        }

        public List<String> published() {
            return List.copyOf(published);
        }
    }
}
