package dev.fencing.spring.support;

import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.context.MissingTokenException;
import dev.fencing.guard.FenceBracket;
import dev.fencing.guard.FenceGuard;
import dev.fencing.guard.FencePoint;
import dev.fencing.guard.InvalidKeyException;
import dev.fencing.mode.FenceMode;
import dev.fencing.mode.FenceModes;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.spring.EnableFencing;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.aop.support.AopUtils;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.io.IOException;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The proxy interceptor runs a checking point on the in-memory store, keyed or not, as a bracket around its own
 * {@code proceed()} (as the woven aspect does): the same verdicts, counters, exceptions, serialization and mode
 * switches as the guard's callback path, which every other point (observed checks, observe mode) still takes.
 */
@Timeout(60)
class ProxyBracketTest {

    static class Ledger {
        final List<String> lines = new CopyOnWriteArrayList<>();
        volatile CountDownLatch inside;
        volatile CountDownLatch leave;

        /** The target's lines (a CGLIB proxy's own fields are never set: ask through a method). */
        public List<String> lines() {
            return lines;
        }

        public void gate(CountDownLatch inside, CountDownLatch leave) {
            this.inside = inside;
            this.leave = leave;
        }

        @Fenced(resource = "ledger")
        public String append(String line) {
            lines.add(line);
            return "#" + lines.size();
        }

        @Fenced(resource = "ledger")
        public void appendOrFail(String line) throws IOException {
            lines.add(line);
            throw new IOException("disk full at " + line);
        }

        @Fenced(resource = "ledger")
        public void appendSlowly(String line) throws InterruptedException {
            inside.countDown();
            leave.await(30, TimeUnit.SECONDS);
            lines.add(line);
        }

        @Fenced(resource = "accounts", key = "#id")
        public long credit(long id) {
            lines.add("credit " + id);
            return id;
        }

        @Fenced(resource = "docs", key = "#name")
        public void edit(String name) {
            lines.add("edit " + name);
        }

        /** The stack the body runs on: the bracket runs it from the interceptor, the guard from its callback. */
        @Fenced(resource = "docs", key = "#name")
        public List<String> stack(String name) {
            return Arrays.stream(new Throwable().getStackTrace()).map(StackTraceElement::getClassName).toList();
        }
    }

    @Configuration
    @EnableFencing
    static class Config {
        @Bean
        Ledger ledger() {
            return new Ledger();
        }

        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }
    }

    @Configuration
    @EnableFencing
    static class Observed extends Config {
        @Bean
        ObservationRegistry observationRegistry() {
            ObservationRegistry registry = ObservationRegistry.create();
            registry.observationConfig().observationHandler(context -> true); // not a no-op registry
            return registry;
        }
    }

    private AnnotationConfigApplicationContext context;

    @AfterEach
    void close() {
        if (context != null) {
            context.close();
        }
    }

    private double checks(String outcome, String enforced) {
        var counter = context.getBean(MeterRegistry.class).find("fencing.checks").tag("resource", "ledger")
                .tag("outcome", outcome).tag("enforced", enforced).counter();
        return counter == null ? 0 : counter.count();
    }

    private Object fenceOf(String name, Class<?>... parameters) throws Exception {
        Method method = Ledger.class.getMethod(name, parameters);
        return context.getBean(FencingSupport.class).fenceFor(method, Ledger.class);
    }

    private static String appendWith(Ledger ledger, long token, String line) {
        try (FencingScope ignored = FencingContext.bind(new FencingToken("ledger", token, "h" + token))) {
            return ledger.append(line);
        }
    }

    @Test
    void aCheckingPointOnTheInMemoryStoreIsABracket() throws Exception {
        context = new AnnotationConfigApplicationContext(Config.class);
        assertThat(AopUtils.isCglibProxy(context.getBean(Ledger.class))).isTrue();
        assertThat(fenceOf("append", String.class)).isInstanceOf(FenceBracket.class);
        assertThat(fenceOf("append", String.class)).as("cached").isSameAs(fenceOf("append", String.class));
        assertThat(fenceOf("credit", long.class)).isInstanceOf(FenceBracket.class);
        Ledger ledger = context.getBean(Ledger.class);
        assertThat(FencingContext.call(new FencingToken("docs:x", 1, "h"), () -> ledger.stack("x")))
                .contains(FencingInterceptor.class.getName()).doesNotContain(FenceGuard.class.getName());
        FencingSupport support = context.getBean(FencingSupport.class);
        Method append = Ledger.class.getMethod("append", String.class);
        assertThat(support.bracketFor(append, Ledger.class)).as("the woven aspect gets the same bracket")
                .isSameAs(fenceOf("append", String.class));
        assertThat(support.bracketFor(Ledger.class.getMethod("credit", long.class), Ledger.class))
                .isSameAs(fenceOf("credit", long.class));
        assertThat(support.points().pointFor(append, Ledger.class))
                .isSameAs(((FenceBracket) fenceOf("append", String.class)).point());
    }

    @Test
    void observedChecksTakeTheGuardsPath() throws Exception {
        context = new AnnotationConfigApplicationContext(Observed.class);
        assertThat(fenceOf("append", String.class)).isInstanceOf(FencePoint.class);
        Ledger ledger = context.getBean(Ledger.class);
        assertThat(FencingContext.call(new FencingToken("docs:x", 1, "h"), () -> ledger.stack("x")))
                .contains(FenceGuard.class.getName());
        assertThat(FencingContext.call(new FencingToken("ledger", 1, "h"), () -> ledger.append("one"))).isEqualTo("#1");
        assertThat(checks("accepted", "true")).isEqualTo(1);
    }

    @Test
    void theBracketAcceptsRejectsAndCountsAsTheGuardDoes() throws Exception {
        context = new AnnotationConfigApplicationContext(Config.class);
        Ledger ledger = context.getBean(Ledger.class);
        InMemoryFenceStore store = context.getBean(InMemoryFenceStore.class);

        assertThat(FencingContext.call(new FencingToken("ledger", 5, "h5"), () -> ledger.append("five")))
                .isEqualTo("#1");
        assertThat(store.maxSeen("ledger")).hasValue(5);
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("ledger", 4, "zombie"),
                () -> ledger.append("stale"))).isInstanceOf(StaleTokenException.class);
        assertThatThrownBy(() -> ledger.append("no token")).isInstanceOf(MissingTokenException.class)
                .hasMessageContaining("Ledger.append(String)");
        assertThat(ledger.lines()).containsExactly("five");
        assertThat(checks("accepted", "true")).isEqualTo(1);
        assertThat(checks("stale", "true")).isEqualTo(1);
        assertThat(checks("missing", "true")).isEqualTo(1);

        // the body's own checked exception comes out unchanged, counted accepted, and the slot is released
        try (FencingScope ignored = FencingContext.bind(new FencingToken("ledger", 6, "h6"))) {
            assertThatThrownBy(() -> ledger.appendOrFail("six")).isExactlyInstanceOf(IOException.class)
                    .hasMessage("disk full at six");
        }
        assertThat(checks("accepted", "true")).isEqualTo(2);
        assertThat(store.maxSeen("ledger")).hasValue(6);
        String seventh = CompletableFuture.supplyAsync(() -> appendWith(ledger, 7, "seven")).get(10, TimeUnit.SECONDS);
        assertThat(seventh).as("another thread enters: the failed call released the resource").isEqualTo("#3");
    }

    @Test
    void aKeyedBracketChecksTheKeysOwnResource() throws Exception {
        context = new AnnotationConfigApplicationContext(Config.class);
        Ledger ledger = context.getBean(Ledger.class);
        InMemoryFenceStore store = context.getBean(InMemoryFenceStore.class);
        assertThat(FencingContext.call(new FencingToken("accounts:7", 3, "h"), () -> ledger.credit(7))).isEqualTo(7);
        assertThat(store.maxSeen("accounts:7")).hasValue(3);
        assertThatThrownBy(() -> FencingContext.call(new FencingToken("accounts:7", 2, "zombie"),
                () -> ledger.credit(7))).isInstanceOf(StaleTokenException.class);
        assertThatThrownBy(() -> FencingContext.call(new FencingToken("accounts:8", 9, "h"), () -> ledger.credit(7)))
                .isInstanceOf(MissingTokenException.class).hasMessageContaining("accounts:7");
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("docs:a", 1, "h"), () -> ledger.edit(null)))
                .isInstanceOf(InvalidKeyException.class).hasMessageContaining("Ledger.edit(String)");
        assertThat(ledger.lines()).containsExactly("credit 7");
        MeterRegistry registry = context.getBean(MeterRegistry.class);
        assertThat(registry.get("fencing.checks").tag("resource", "accounts").tag("outcome", "accepted").counter()
                .count()).isEqualTo(1);
        assertThat(registry.get("fencing.checks").tag("resource", "accounts").tag("outcome", "stale").counter()
                .count()).isEqualTo(1);
        assertThat(registry.get("fencing.checks").tag("resource", "docs").tag("outcome", "invalid").counter()
                .count()).isEqualTo(1);
        assertThat(store.maxSeen("docs:a")).isEmpty();
    }

    @Test
    void aSecondWriterWaitsForTheFirstsBodyAndAZombieBehindItIsRefused() throws Exception {
        context = new AnnotationConfigApplicationContext(Config.class);
        Ledger ledger = context.getBean(Ledger.class);
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch leave = new CountDownLatch(1);
        ledger.gate(inside, leave);
        CompletableFuture<Void> first = CompletableFuture.runAsync(() -> {
            try (FencingScope ignored = FencingContext.bind(new FencingToken("ledger", 10, "h10"))) {
                ledger.appendSlowly("ten");
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<String> zombie = CompletableFuture.supplyAsync(() -> appendWith(ledger, 9, "nine"));
        assertThatThrownBy(() -> zombie.get(300, TimeUnit.MILLISECONDS)).isInstanceOf(TimeoutException.class);
        leave.countDown();
        first.get(10, TimeUnit.SECONDS);
        assertThatThrownBy(() -> zombie.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(StaleTokenException.class);
        assertThat(ledger.lines()).containsExactly("ten");
    }

    @Test
    void aModeSwitchedAtRuntimeReachesTheCachedBracket() throws Exception {
        context = new AnnotationConfigApplicationContext(Config.class);
        Ledger ledger = context.getBean(Ledger.class);
        FencingContext.run(new FencingToken("ledger", 5, "h"), () -> ledger.append("first"));
        assertThat(fenceOf("append", String.class)).isInstanceOf(FenceBracket.class);

        FenceModes modes = context.getBean(FenceModes.class);
        modes.set("ledger", FenceMode.OBSERVE, "test");
        ledger.append("without a token");
        FencingContext.run(new FencingToken("ledger", 3, "zombie"), () -> ledger.append("stale"));
        assertThat(ledger.lines()).containsExactly("first", "without a token", "stale");
        assertThat(checks("missing", "false")).isEqualTo(1);
        assertThat(checks("stale", "false")).isEqualTo(1);
        assertThat(context.getBean(InMemoryFenceStore.class).maxSeen("ledger")).hasValue(5);

        modes.set("ledger", FenceMode.ENFORCE, "test");
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("ledger", 4, "zombie"),
                () -> ledger.append("stale again"))).isInstanceOf(StaleTokenException.class);
        assertThat(ledger.lines()).hasSize(3);
    }
}
