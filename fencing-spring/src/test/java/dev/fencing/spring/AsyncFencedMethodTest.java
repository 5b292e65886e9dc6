package dev.fencing.spring;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.context.MissingTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.store.FenceStore;
import dev.fencing.store.FencedCall;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.task.support.ContextPropagatingTaskDecorator;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.AsyncAnnotationAdvisor;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.scheduling.concurrent.ThreadPoolTaskExecutor;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code @Fenced} on an {@code @Async} method that returns a future: the check runs in the asynchronous body, on the
 * executor's thread, with the caller's token; a rejection completes the future exceptionally. A future-returning
 * fenced method that is not {@code @Async}, and a proxy whose fence would run before the hand-off, fail at startup.
 */
class AsyncFencedMethodTest {

    /** What each accepted write saw: the thread it ran on and the token bound there. */
    static class Journal {
        final List<String> writes = new CopyOnWriteArrayList<>();

        @Async
        @Fenced(resource = "journal")
        public CompletableFuture<String> write(String entry) {
            writes.add(entry + " on " + Thread.currentThread().getName() + " with "
                    + FencingContext.current("journal").value());
            return CompletableFuture.completedFuture(Thread.currentThread().getName());
        }
    }

    static class NotAsyncJournal {
        @Fenced(resource = "journal")
        public CompletableFuture<String> write(String entry) {
            return CompletableFuture.supplyAsync(() -> entry);
        }
    }

    /** A body that hands its write to yet another thread and returns before it is done. */
    static class HandOffJournal {
        final List<Long> writes = new CopyOnWriteArrayList<>();
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final ExecutorService elsewhere = Executors.newCachedThreadPool();

        @Async
        @Fenced(resource = "journal")
        public CompletableFuture<Long> write(long value, boolean hold) {
            return CompletableFuture.supplyAsync(() -> {
                if (hold) {
                    entered.countDown();
                    try {
                        release.await(10, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                writes.add(value);
                return value;
            }, elsewhere);
        }

        @Async
        @Fenced(resource = "journal")
        public CompletableFuture<Long> writeThenFail(long value) {
            return CompletableFuture.supplyAsync(() -> {
                writes.add(value);
                throw new IllegalStateException("failed after writing " + value);
            }, elsewhere);
        }
    }

    /** A store that, like a transactional one, sees the write's failure and would roll the check back on it. */
    static final class RollingBackStore implements FenceStore {
        final InMemoryFenceStore delegate = new InMemoryFenceStore();
        final AtomicInteger rolledBack = new AtomicInteger();

        @Override
        public <T> T fence(String resource, FencingToken token, FencedCall<T> write) throws Throwable {
            try {
                return delegate.fence(resource, token, write);
            } catch (Throwable t) {
                rolledBack.incrementAndGet();
                throw t;
            }
        }
    }

    /** Without @EnableAsync: @Async is inert, the body and its fence run on the caller's thread. */
    @Configuration
    @EnableFencing
    static class HandOff {
        @Bean
        RollingBackStore fenceStore() {
            return new RollingBackStore();
        }

        @Bean
        HandOffJournal journal() {
            return new HandOffJournal();
        }
    }

    @Configuration
    @EnableAsync
    @EnableFencing
    static class Base {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }

        @Bean
        ThreadPoolTaskExecutor taskExecutor() {
            ThreadPoolTaskExecutor executor = new ThreadPoolTaskExecutor();
            executor.setCorePoolSize(1);
            executor.setThreadNamePrefix("async-");
            executor.setTaskDecorator(new ContextPropagatingTaskDecorator());
            return executor;
        }
    }

    @Configuration
    static class WithJournal extends Base {
        @Bean
        Journal journal() {
            return new Journal();
        }
    }

    @Configuration
    static class WithNotAsync extends Base {
        @Bean
        NotAsyncJournal journal() {
            return new NotAsyncJournal();
        }
    }

    /**
     * The bean arrives already proxied for @Async: the auto-proxy creator wraps another proxy around it, whose fence
     * (run on @EnableAsync's executor) comes before the inner proxy's hand-off to a second executor.
     */
    @Configuration
    @EnableAsync
    @EnableFencing(proxyTargetClass = true)
    static class FenceOutside {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        Journal journal() {
            ProxyFactory factory = new ProxyFactory(new Journal());
            factory.setProxyTargetClass(true);
            factory.addAdvisor(new AsyncAnnotationAdvisor(Executors.newSingleThreadExecutor(), null));
            return (Journal) factory.getProxy();
        }
    }

    private AnnotationConfigApplicationContext context;

    @AfterEach
    void close() {
        if (context != null) {
            context.close();
        }
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    @Test
    void theCheckRunsInTheAsyncBodyWithTheCallersTokenAndAStaleOneFailsTheFuture() throws Exception {
        context = new AnnotationConfigApplicationContext(WithJournal.class);
        Journal journal = context.getBean(Journal.class);
        Journal target = (Journal) AopProxyUtils.getSingletonTarget(journal);

        String thread;
        try (var ignored = FencingContext.bind(new FencingToken("journal", 5, "caller"))) {
            thread = journal.write("first").get(10, TimeUnit.SECONDS);
        }
        assertThat(thread).startsWith("async-");
        assertThat(target.writes).containsExactly("first on " + thread + " with 5");

        CompletableFuture<String> zombie;
        try (var ignored = FencingContext.bind(new FencingToken("journal", 4, "zombie"))) {
            zombie = journal.write("zombie");
        }
        assertThatThrownBy(() -> zombie.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(StaleTokenException.class);
        assertThat(target.writes).hasSize(1);

        assertThatThrownBy(() -> journal.write("no token").get(10, TimeUnit.SECONDS))
                .hasCauseInstanceOf(MissingTokenException.class);
        MeterRegistry registry = context.getBean(MeterRegistry.class);
        assertThat(registry.get("fencing.checks").tag("resource", "journal").tag("outcome", "accepted").counter()
                .count()).isEqualTo(1);
        assertThat(registry.get("fencing.checks").tag("resource", "journal").tag("outcome", "stale").counter()
                .count()).isEqualTo(1);
        assertThat(registry.get("fencing.checks").tag("resource", "journal").tag("outcome", "missing").counter()
                .count()).isEqualTo(1);
    }

    @Test
    void theFenceHoldsUntilTheFutureTheBodyReturnsIsDoneSoALaterTokenWritesAfterIt() throws Exception {
        context = new AnnotationConfigApplicationContext(HandOff.class);
        HandOffJournal journal = context.getBean(HandOffJournal.class);
        HandOffJournal target = (HandOffJournal) AopProxyUtils.getSingletonTarget(journal);
        ExecutorService callers = Executors.newFixedThreadPool(2);
        try {
            Future<Long> zombie = callers.submit(() -> FencingContext.call(new FencingToken("journal", 5, "zombie"),
                    () -> journal.write(5, true).get(10, TimeUnit.SECONDS)));
            assertThat(target.entered.await(10, TimeUnit.SECONDS)).isTrue();
            Future<Long> next = callers.submit(() -> FencingContext.call(new FencingToken("journal", 6, "next"),
                    () -> journal.write(6, false).get(10, TimeUnit.SECONDS)));
            // token 6's check waits for token 5's, which waits for its body's future
            Thread.sleep(300);
            assertThat(target.writes).isEmpty();
            target.release.countDown();
            assertThat(zombie.get(10, TimeUnit.SECONDS)).isEqualTo(5);
            assertThat(next.get(10, TimeUnit.SECONDS)).isEqualTo(6);
            assertThat(target.writes).containsExactly(5L, 6L);
        } finally {
            callers.shutdownNow();
            target.elsewhere.shutdownNow();
        }
    }

    @Test
    void aHandedOffWriteThatFailsAfterWritingLeavesTheCheckStandingSoAnOlderTokenStaysRefused() throws Exception {
        context = new AnnotationConfigApplicationContext(HandOff.class);
        HandOffJournal journal = context.getBean(HandOffJournal.class);
        HandOffJournal target = (HandOffJournal) AopProxyUtils.getSingletonTarget(journal);
        RollingBackStore store = context.getBean(RollingBackStore.class);
        try {
            CompletableFuture<Long> failed = FencingContext.call(new FencingToken("journal", 20, "a"),
                    () -> journal.writeThenFail(20));
            assertThatThrownBy(() -> failed.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(IllegalStateException.class);
            assertThat(store.rolledBack).hasValue(0); // the check stands: its transaction would commit
            assertThat(store.delegate.maxSeen("journal")).hasValue(20);
            assertThatThrownBy(() -> FencingContext.call(new FencingToken("journal", 15, "b"),
                    () -> journal.write(15, false)))
                    .isInstanceOf(StaleTokenException.class);
            assertThat(target.writes).containsExactly(20L);
        } finally {
            target.elsewhere.shutdownNow();
        }
    }

    @Test
    void aFutureReturningFencedMethodThatIsNotAsyncFailsAtStartup() {
        assertThatThrownBy(() -> context = new AnnotationConfigApplicationContext(WithNotAsync.class))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("NotAsyncJournal.write(String)")
                .hasMessageContaining("CompletableFuture but is not @Async")
                .hasMessageContaining("ContextPropagatingTaskDecorator");
    }

    @Test
    void aFenceThatWouldRunBeforeTheAsyncHandOffFailsAtStartup() {
        assertThatThrownBy(() -> context = new AnnotationConfigApplicationContext(FenceOutside.class))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("Journal.write(String) is both @Async and @Fenced")
                .hasMessageContaining("before an asynchronous hand-off");
    }
}
