package dev.fencing.spring;

import dev.fencing.annotation.Fenced;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Through Spring proxies and a transaction per item: a job under {@code orders} whose writer takes a keyed lock per
 * item stops at the first item after the job's lock is known lost, before the lock service is asked for that item,
 * and the job's caller gets the refusal (a Spring Batch trial's resumed zombie overwrote 30 of 40 rows instead).
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class NestedUnderLostLockProxyTest {

    static class Rows {
        final List<Long> written = new CopyOnWriteArrayList<>();

        @Fenced(resource = "order", key = "#id")
        public void update(long id) {
            written.add(id);
        }

        public List<Long> written() {
            return written;
        }
    }

    static class Writer {
        Rows rows;

        @Transactional
        @Fenced(resource = "order", key = "#id", acquire = true)
        public void writeOne(long id) {
            rows.update(id);
        }
    }

    static class Job {
        Writer writer;
        LosableIssuer issuer;

        @Fenced(resource = "orders", acquire = true)
        public String run(List<Long> ids, long loseAfter) {
            for (long id : ids) {
                writer.writeOne(id);
                if (id == loseAfter) {
                    issuer.lose("orders"); // the job's lease ends while it runs (a process paused past its session)
                }
            }
            return "COMPLETED";
        }
    }

    /** Counts acquisitions per resource, and makes the current lease of a resource lost on demand. */
    static final class LosableIssuer implements TokenIssuer {
        final TokenIssuer delegate = new InMemoryTokenIssuer();
        final Map<String, AtomicInteger> asked = new ConcurrentHashMap<>();
        final Map<String, AtomicBoolean> lost = new ConcurrentHashMap<>();

        @Override
        public Lease acquire(String resource, Duration timeout) {
            asked.computeIfAbsent(resource, r -> new AtomicInteger()).incrementAndGet();
            Lease lease = delegate.acquire(resource, timeout);
            AtomicBoolean gone = new AtomicBoolean();
            lost.put(resource, gone);
            return new Lease() {
                @Override
                public FencingToken token() {
                    return lease.token();
                }

                @Override
                public boolean isLost() {
                    return gone.get() || lease.isLost();
                }

                @Override
                public boolean isReleased() {
                    return lease.isReleased();
                }

                @Override
                public void close() {
                    lease.close();
                }
            };
        }

        void lose(String resource) {
            lost.get(resource).set(true);
        }

        int asked(String resource) {
            AtomicInteger n = asked.get(resource);
            return n == null ? 0 : n.get();
        }
    }

    @Configuration
    @EnableFencing
    @EnableTransactionManagement
    static class Config {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        LosableIssuer tokenIssuer() {
            return new LosableIssuer();
        }

        /** The wrapped issuer's locks are this JVM's, which the in-memory store's check cannot see: one instance. */
        @Bean
        FencingConfigurer oneInstance() {
            return new FencingConfigurer() {
                @Override
                public Boolean singleInstance() {
                    return true;
                }
            };
        }

        @Bean
        PlatformTransactionManager transactionManager() {
            return new TransactionOrderTest.NoResourceTransactionManager();
        }

        @Bean
        Rows rows() {
            return new Rows();
        }

        @Bean
        Writer writer(Rows rows) {
            Writer writer = new Writer();
            writer.rows = rows;
            return writer;
        }

        @Bean
        Job job(Writer writer, LosableIssuer issuer) {
            Job job = new Job();
            job.writer = writer;
            job.issuer = issuer;
            return job;
        }
    }

    @Test
    void theJobStopsAtTheFirstItemAfterItsLockIsLost() {
        try (var ctx = new AnnotationConfigApplicationContext(Config.class)) {
            Job job = ctx.getBean(Job.class);
            LosableIssuer issuer = ctx.getBean(LosableIssuer.class);
            assertThatThrownBy(() -> job.run(List.of(1L, 2L, 3L), 1L))
                    .isInstanceOfSatisfying(StaleTokenException.class, e -> {
                        assertThat(e.lockLost()).isTrue();
                        assertThat(e.enclosingLock().resource()).isEqualTo("orders");
                        assertThat(e.getMessage()).contains("writeOne", "'order:2'", "'orders'", "lost");
                    });
            assertThat(ctx.getBean(Rows.class).written()).containsExactly(1L);
            assertThat(issuer.asked("order:2")).isZero();
            assertThat(issuer.asked("order:3")).isZero();
        }
    }

    @Test
    void aHealthyJobWritesEveryItem() {
        try (var ctx = new AnnotationConfigApplicationContext(Config.class)) {
            assertThat(ctx.getBean(Job.class).run(List.of(1L, 2L, 3L), -1L)).isEqualTo("COMPLETED");
            assertThat(ctx.getBean(Rows.class).written()).containsExactly(1L, 2L, 3L);
            assertThat(ctx.getBean(LosableIssuer.class).asked("order:3")).isEqualTo(1);
        }
    }
}
