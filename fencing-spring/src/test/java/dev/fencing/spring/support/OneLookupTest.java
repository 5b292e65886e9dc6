package dev.fencing.spring.support;

import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.guard.FencePoint;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.spring.EnableFencing;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.springframework.aop.MethodMatcher;
import org.springframework.aop.support.AopUtils;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One annotation lookup per class and method, shared by the PROXY-mode pointcut, the startup validator and the
 * calls (as {@code TransactionAttributeSourcePointcut} shares the transaction attribute source), and one that needs
 * none of the collaborators, which are resolved on first use.
 */
class OneLookupTest {

    static class Ledger {
        final List<String> lines = new CopyOnWriteArrayList<>();

        @Fenced(resource = "ledger")
        public void append(String line) {
            lines.add(line);
        }

        public int size() {
            return lines.size();
        }
    }

    @Configuration
    @EnableFencing(allowInMemoryStore = true)
    static class Config {
        @Bean
        Ledger ledger() {
            return new Ledger();
        }
    }

    @Test
    void eachMethodIsLookedUpOnceAcrossPointcutValidationAndCalls() throws Exception {
        try (var ctx = new AnnotationConfigApplicationContext(Config.class)) {
            FencingSupport support = ctx.getBean(FencingSupport.class);
            FenceResolutions resolutions = support.resolutions();
            Ledger ledger = ctx.getBean(Ledger.class);
            assertThat(AopUtils.isCglibProxy(ledger)).isTrue();

            // the pointcut matched and the validator checked every method: no class and method was looked up twice
            long afterStartup = resolutions.lookups.sum();
            assertThat(afterStartup).isPositive().isEqualTo(resolutions.cached.sum());

            Method append = Ledger.class.getMethod("append", String.class);
            Method size = Ledger.class.getMethod("size");
            FencePointSource.Resolution resolution = resolutions.resolutionFor(append, Ledger.class);
            assertThat(resolution).isNotNull();
            assertThat(resolution.method()).isEqualTo(append);
            assertThat(resolutions.resolutionFor(size, Ledger.class)).isNull();
            assertThat(resolutions.lookups.sum()).as("both were looked up during startup").isEqualTo(afterStartup);

            for (int i = 1; i <= 3; i++) {
                FencingContext.run(new FencingToken("ledger", i, "h" + i), () -> ledger.append("line"));
                assertThat(ledger.size()).isEqualTo(i);
            }
            assertThat(resolutions.lookups.sum()).as("the calls used the cached lookups").isEqualTo(afterStartup);
            assertThat(resolutions.cached.sum()).isEqualTo(afterStartup);
            assertThat(resolutions.resolutionFor(append, Ledger.class)).isSameAs(resolution);
            FencePoint point = support.points().pointFor(append, Ledger.class);
            assertThat(point).isNotNull().isSameAs(support.points().pointFor(append, Ledger.class));
        }
    }

    @Test
    void thePointcutAsksTheSharedLookupsWithoutResolvingTheCollaborators() throws Exception {
        AtomicInteger pulled = new AtomicInteger();
        FencingSupport support = FencingSupport.resolvedOnFirstUse(
                () -> {
                    pulled.incrementAndGet();
                    return new InMemoryFenceStore();
                },
                () -> {
                    pulled.incrementAndGet();
                    return null;
                },
                Duration.ofSeconds(1),
                () -> {
                    pulled.incrementAndGet();
                    return FencingMetrics.noop();
                });
        MethodMatcher pointcut = new FencingAdvisor(support, false, () -> false).getPointcut().getMethodMatcher();
        Method append = Ledger.class.getMethod("append", String.class);
        Method size = Ledger.class.getMethod("size");

        for (int i = 0; i < 3; i++) {
            assertThat(pointcut.matches(append, Ledger.class)).isTrue();
            assertThat(pointcut.matches(size, Ledger.class)).isFalse();
        }
        assertThat(pulled).as("matching resolves no store, issuer or meter registry").hasValue(0);
        assertThat(support.resolutions().lookups.sum()).isEqualTo(2);

        // the first use builds the fence point from the lookup the pointcut cached
        FencePoint point = support.points().pointFor(append, Ledger.class);
        assertThat(point).isNotNull();
        assertThat(support.points().pointFor(size, Ledger.class)).isNull();
        assertThat(pulled).hasValue(3);
        assertThat(support.resolutions().lookups.sum()).isEqualTo(2);
    }

    /** A method inherited by two classes whose type-level annotations name different resources. */
    static class Base {
        public String save(String line) {
            return line;
        }
    }

    @Fenced(resource = "orders")
    static class Orders extends Base {
    }

    @Fenced(resource = "invoices")
    static class Invoices extends Base {
    }

    static class Plain extends Base {
    }

    @Test
    void oneMethodInvokedOnSeveralTargetClassesHasEachClasssFenceCachedApart() throws Exception {
        FencingSupport support = new FencingSupport(new dev.fencing.guard.FenceGuard(new InMemoryFenceStore()),
                FencingMetrics.noop());
        Method save = Base.class.getMethod("save", String.class);
        FencePointSource points = support.points();

        FencePoint orders = points.pointFor(save, Orders.class);
        assertThat(orders.resource()).isEqualTo("orders");
        // a second class moves the method's entry from one class to a map by class; the first keeps its point
        FencePoint invoices = points.pointFor(save, Invoices.class);
        assertThat(invoices.resource()).isEqualTo("invoices");
        assertThat(points.pointFor(save, Plain.class)).isNull();
        for (int i = 0; i < 2; i++) {
            assertThat(points.pointFor(save, Orders.class)).isSameAs(orders);
            assertThat(points.pointFor(save, Invoices.class)).isSameAs(invoices);
            assertThat(points.pointFor(save, Plain.class)).isNull();
        }
    }
}
