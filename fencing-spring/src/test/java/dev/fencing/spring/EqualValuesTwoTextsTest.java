package dev.fencing.spring;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import dev.fencing.annotation.FencingKey;
import dev.fencing.context.FencingContext;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.store.InMemoryFenceStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Equal key values of one type have one key text, so two callers of one entity hold one lock and one max_seen: a
 * {@code BigDecimal} has its text without trailing zeros ({@code 1} and {@code 1.00}, a request's id and a NUMERIC
 * column's as the driver returns it), an {@code OffsetDateTime} or {@code ZonedDateTime} its instant's (one
 * TIMESTAMPTZ at two offsets, {@code Z} and {@code Z[UTC]}). Before (a red-team review), keys.md called both stable
 * while their {@code toString()} told equal values apart: the two callers below each held a lock of their own, each
 * passed a fence of its own, and their bodies ran at once. A record keyed whole with such a component (its text is
 * the component's {@code toString()}) fails startup, naming the component and {@code FencingKey}.
 */
class EqualValuesTwoTextsTest {

    static class AccountRepository {
        static final AtomicInteger inside = new AtomicInteger();
        static final AtomicInteger overlaps = new AtomicInteger();
        static volatile CountDownLatch bothIn = new CountDownLatch(2);

        @Fenced(resource = "accounts", key = "#id")
        public void deposit(BigDecimal id, long amount) throws InterruptedException {
            enter();
        }

        @Fenced(resource = "slots", key = "#start")
        public void book(OffsetDateTime start) throws InterruptedException {
            enter();
        }

        @Fenced(resource = "meetings", key = "#start")
        public void meet(ZonedDateTime start) throws InterruptedException {
            enter();
        }

        private void enter() throws InterruptedException {
            if (inside.incrementAndGet() > 1) {
                overlaps.incrementAndGet();
            }
            bothIn.countDown();
            bothIn.await(2, TimeUnit.SECONDS); // hold the body while the other caller tries to get in
            inside.decrementAndGet();
        }
    }

    static class AccountService {
        private final AccountRepository repository;

        AccountService(AccountRepository repository) {
            this.repository = repository;
        }

        @Fenced(resource = "accounts", key = "#id", acquire = true)
        public void deposit(BigDecimal id, long amount) throws InterruptedException {
            repository.deposit(id, amount);
        }

        @Fenced(resource = "slots", key = "#start", acquire = true)
        public void book(OffsetDateTime start) throws InterruptedException {
            repository.book(start);
        }

        @Fenced(resource = "meetings", key = "#start", acquire = true)
        public void meet(ZonedDateTime start) throws InterruptedException {
            repository.meet(start);
        }
    }

    /** An account's reference, keyed whole: its text is {@code AccountRef[id=1.00]}. */
    record AccountRef(String bank, BigDecimal id) {
    }

    static class RefRepository {
        @Fenced(resource = "refs", key = "#ref")
        public void write(AccountRef ref) {
        }
    }

    @Configuration
    @EnableFencing(allowInMemoryStore = true)
    static class RecordConfig {
        @Bean
        RefRepository refRepository() {
            return new RefRepository();
        }
    }

    @Configuration
    @EnableFencing(acquireTimeoutMillis = 3000)
    static class Config {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        TokenIssuer tokenIssuer() {
            return new InMemoryTokenIssuer(Duration.ofSeconds(30), 32);
        }

        @Bean
        AccountRepository accountRepository() {
            return new AccountRepository();
        }

        @Bean
        AccountService accountService(AccountRepository repository) {
            return new AccountService(repository);
        }
    }

    @AfterEach
    void clean() {
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    private interface Call {
        void run() throws Exception;
    }

    private static int overlapsOf(AccountRepository repository, Call first, Call second) throws Exception {
        AccountRepository.bothIn = new CountDownLatch(2);
        AccountRepository.overlaps.set(0);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        CyclicBarrier barrier = new CyclicBarrier(2);
        try {
            Future<?> a = pool.submit(() -> {
                barrier.await(5, TimeUnit.SECONDS);
                first.run();
                return null;
            });
            Future<?> b = pool.submit(() -> {
                barrier.await(5, TimeUnit.SECONDS);
                second.run();
                return null;
            });
            a.get(20, TimeUnit.SECONDS);
            b.get(20, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }
        return AccountRepository.overlaps.get();
    }

    @Test
    @Timeout(60)
    void oneAccountKeyedByTwoEqualBigDecimalsIsTwoLocksAndTwoFences() throws Exception {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(Config.class)) {
            AccountService service = context.getBean(AccountService.class);
            AccountRepository repository = context.getBean(AccountRepository.class);
            // the same account: a request's "1" and the entity's NUMERIC(12,2) id as the driver returns it
            assertThat(new BigDecimal("1").compareTo(new BigDecimal("1.00"))).isZero();
            int overlaps = overlapsOf(repository, () -> service.deposit(new BigDecimal("1"), 10),
                    () -> service.deposit(new BigDecimal("1.00"), 20));
            assertThat(overlaps).as("bodies for account 1 running at once under two locks").isZero();
        }
    }

    @Test
    @Timeout(60)
    void oneInstantAtTwoOffsetsIsTwoLocksAndTwoFences() throws Exception {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(Config.class)) {
            AccountService service = context.getBean(AccountService.class);
            AccountRepository repository = context.getBean(AccountRepository.class);
            OffsetDateTime utc = OffsetDateTime.of(2026, 12, 6, 9, 0, 0, 0, ZoneOffset.UTC);
            OffsetDateTime paris = utc.withOffsetSameInstant(ZoneOffset.ofHours(1));
            assertThat(utc.isEqual(paris)).isTrue();
            int overlaps = overlapsOf(repository, () -> service.book(utc), () -> service.book(paris));
            assertThat(overlaps).as("bodies for one slot running at once under two locks").isZero();
        }
    }

    @Test
    @Timeout(60)
    void oneInstantInTwoSpellingsOfUtcIsOneLock() throws Exception {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(Config.class)) {
            AccountService service = context.getBean(AccountService.class);
            AccountRepository repository = context.getBean(AccountRepository.class);
            ZonedDateTime offset = ZonedDateTime.of(2026, 12, 6, 9, 0, 0, 0, ZoneOffset.UTC);
            ZonedDateTime region = offset.withZoneSameInstant(ZoneId.of("UTC"));
            assertThat(offset.toString()).isNotEqualTo(region.toString()); // ...Z and ...Z[UTC]
            assertThat(offset.isEqual(region)).isTrue();
            int overlaps = overlapsOf(repository, () -> service.meet(offset), () -> service.meet(region));
            assertThat(overlaps).as("bodies for one meeting running at once under two locks").isZero();
        }
    }

    /** A record keyed whole takes its components' toString(): one with a BigDecimal fails startup, naming both. */
    @Test
    @Timeout(30)
    void aRecordKeyWithABigDecimalComponentFailsStartup() {
        assertThat(new AccountRef("b", new BigDecimal("1")).toString())
                .isNotEqualTo(new AccountRef("b", new BigDecimal("1.00")).toString());
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(RecordConfig.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("RefRepository.write")
                .hasMessageContaining("a record whose component id is a BigDecimal")
                .hasMessageContaining("'#ref.id'")
                .hasMessageContaining(FencingKey.class.getName() + " on AccountRef");
    }
}
