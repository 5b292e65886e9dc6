package dev.fencing.spring;

import dev.fencing.spring.support.FencingSupport;
import dev.fencing.spring.support.SupportAccess;
import dev.fencing.context.FencingContext;
import dev.fencing.guard.FencePoint;
import dev.fencing.guard.InvalidKeyException;
import dev.fencing.context.MissingTokenException;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.store.FenceStore;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.aop.support.AopUtils;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.expression.spel.standard.SpelExpression;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ProxyFencingTest {

    @Configuration
    @EnableFencing
    static class Config {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        TokenIssuer tokenIssuer() {
            return new InMemoryTokenIssuer(Duration.ofMillis(200), 32);
        }

        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }

        @Bean
        Fixtures.Ledger ledger() {
            return new Fixtures.Ledger();
        }

        @Bean
        Fixtures.Bookkeeper bookkeeper(Fixtures.Ledger ledger) {
            return new Fixtures.Bookkeeper(ledger);
        }

        @Bean
        Fixtures.AccountRepository accountRepository() {
            return new Fixtures.MapAccountRepository();
        }

        @Bean
        Fixtures.Journal journal() {
            return new Fixtures.ListJournal();
        }
    }

    @Configuration
    @EnableFencing(proxyTargetClass = true)
    static class ClassProxyConfig extends Config {
    }

    private AnnotationConfigApplicationContext context;

    @AfterEach
    void close() {
        if (context != null) {
            context.close();
        }
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    private AnnotationConfigApplicationContext start(Class<?> config) {
        context = new AnnotationConfigApplicationContext(config);
        return context;
    }

    private double checks(String resource, String outcome) {
        var counter = context.getBean(MeterRegistry.class).find("fencing.checks")
                .tag("resource", resource).tag("outcome", outcome).counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void canonicalRaceThroughSpringBeans() throws Exception {
        start(Config.class);
        context.getBean(InMemoryFenceStore.class).raiseFloor("ledger", 32);
        Fixtures.Bookkeeper bookkeeper = context.getBean(Fixtures.Bookkeeper.class);
        Fixtures.Ledger ledger = context.getBean(Fixtures.Ledger.class);

        CountDownLatch acquired = new CountDownLatch(1);
        CountDownLatch wake = new CountDownLatch(1);
        Throwable[] knownLost = new Throwable[1];
        CompletableFuture<Throwable> client1 = CompletableFuture.supplyAsync(() -> {
            try {
                bookkeeper.bookWith(() -> {
                    acquired.countDown();
                    await(wake);
                    try {
                        ledger.append("Y"); // its own process knows the lease ran out
                    } catch (StaleTokenException e) {
                        knownLost[0] = e;
                    }
                    // the same token as a process that does not know its lease is lost presents it: the store decides
                    try (var remote = FencingContext.bindRemote(java.util.List.of(FencingContext.current("ledger")))) {
                        ledger.append("Y");
                    }
                });
                return null;
            } catch (Throwable t) {
                return t;
            }
        });
        assertThat(acquired.await(10, TimeUnit.SECONDS)).isTrue();
        FencingToken client2 = bookkeeper.book("X"); // waits for client 1's lease to expire, then gets 34
        wake.countDown();

        assertThat(client2.value()).isEqualTo(34);
        assertThat(client1.get(10, TimeUnit.SECONDS)).isInstanceOfSatisfying(StaleTokenException.class, e -> {
            assertThat(e.lockLost()).isFalse();
            assertThat(e.presented().value()).isEqualTo(33);
            assertThat(e.maxSeen()).isEqualTo(34);
            assertThat(e.operation()).isEqualTo("Fixtures.Ledger.append(String)");
        });
        assertThat(knownLost[0]).isInstanceOfSatisfying(StaleTokenException.class, e -> {
            assertThat(e.lockLost()).isTrue();
            assertThat(e.presented().value()).isEqualTo(33);
            assertThat(e.operation()).isEqualTo("Fixtures.Ledger.append(String)");
        });
        assertThat(target(ledger).entries).containsExactly("X");
        assertThat(checks("ledger", "accepted")).isEqualTo(1);
        assertThat(checks("ledger", "stale")).isEqualTo(2);
    }

    @SuppressWarnings("unchecked")
    private static <T> T target(T proxy) {
        return (T) AopProxyUtils.getSingletonTarget(proxy);
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void repositoryCalledWithoutATokenIsRejectedAndCounted() {
        start(Config.class);
        Fixtures.Bookkeeper bookkeeper = context.getBean(Fixtures.Bookkeeper.class);
        assertThatThrownBy(() -> bookkeeper.bookWithoutFence("sneaky"))
                .isInstanceOfSatisfying(MissingTokenException.class,
                        e -> assertThat(e.operation()).isEqualTo("Fixtures.Ledger.append(String)"));
        assertThat(target(context.getBean(Fixtures.Ledger.class)).entries).isEmpty();
        assertThat(checks("ledger", "missing")).isEqualTo(1);
    }

    @Test
    void acquiringServiceBindsReleasesAndTheRepositorySeesTheToken() {
        start(Config.class);
        Fixtures.Bookkeeper bookkeeper = context.getBean(Fixtures.Bookkeeper.class);
        FencingToken first = bookkeeper.book("a");
        FencingToken second = bookkeeper.book("b"); // the first lease was released, no waiting
        assertThat(second.value()).isGreaterThan(first.value());
        assertThat(target(context.getBean(Fixtures.Ledger.class)).seen).containsExactly(first, second);
        assertThat(checks("ledger", "accepted")).isEqualTo(2); // once per call: the advice never runs twice
        assertThat(context.getBean(MeterRegistry.class).get("fencing.acquisitions")
                .tag("outcome", "acquired").counters().stream().mapToDouble(c -> c.count()).sum()).isEqualTo(2);
    }

    @Test
    void interfaceAnnotationsApplyThroughAJdkProxy() {
        start(Config.class);
        Fixtures.AccountRepository repo = context.getBean(Fixtures.AccountRepository.class);
        assertThat(AopUtils.isJdkDynamicProxy(repo)).isTrue();
        assertInterfaceAnnotationsApply(repo);
    }

    @Test
    void interfaceAnnotationsApplyThroughAClassProxy() {
        start(ClassProxyConfig.class);
        Fixtures.AccountRepository repo = context.getBean(Fixtures.AccountRepository.class);
        assertThat(AopUtils.isCglibProxy(repo)).isTrue();
        assertInterfaceAnnotationsApply(repo);
    }

    private void assertInterfaceAnnotationsApply(Fixtures.AccountRepository repo) {
        assertThatThrownBy(() -> repo.deposit(42, 100)).isInstanceOf(MissingTokenException.class)
                .hasMessageContaining("accounts:42");
        FencingContext.run(new FencingToken("accounts:42", 5, "h"), () -> repo.deposit(42, 100));
        assertThat(repo.balance(42)).isEqualTo(100); // balance() is not fenced
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("accounts:42", 4, "old"),
                () -> repo.deposit(42, 1))).isInstanceOf(StaleTokenException.class);
        assertThat(repo.balance(42)).isEqualTo(100);
        assertThat(context.getBean(InMemoryFenceStore.class).maxSeen("accounts:42")).hasValue(5);
    }

    @Test
    void spelKeysByNamePropertyAndPosition() {
        start(Config.class);
        Fixtures.AccountRepository repo = context.getBean(Fixtures.AccountRepository.class);
        Fixtures.MapAccountRepository target = (Fixtures.MapAccountRepository) AopProxyUtils.getSingletonTarget(repo);
        InMemoryFenceStore store = context.getBean(InMemoryFenceStore.class);

        FencingContext.run(new FencingToken("accounts:7", 1, "h"), () -> repo.place(new Fixtures.Order(7)));
        assertThat(store.maxSeen("accounts:7")).hasValue(1);
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("accounts:7", 1, "h"),
                () -> repo.place(new Fixtures.Order(8)))).isInstanceOf(MissingTokenException.class);

        FencingContext.run(new FencingToken("accounts:9", 3, "h"), () -> repo.close(9));
        assertThat(store.maxSeen("accounts:9")).hasValue(3);
        assertThat(target.log).containsExactly("order for 7");

        Fixtures.Ledger ledger = context.getBean(Fixtures.Ledger.class);
        FencingContext.run(new FencingToken("shipments:north", 2, "h"),
                () -> ledger.ship(new Fixtures.Shipment("north", 11)));
        assertThat(target(ledger).entries).containsExactly("shipped 11");
        // counters are tagged with the static resource only
        assertThat(checks("accounts", "accepted")).isEqualTo(2);
        assertThat(checks("accounts", "missing")).isEqualTo(1);
        assertThat(context.getBean(MeterRegistry.class).find("fencing.checks").tag("resource", "accounts:7").counter())
                .isNull();
    }

    @Test
    void manyCallsWithAnEvaluatedKeyStayCorrectOnceSpelCompiles() throws Exception {
        start(Config.class);
        Fixtures.AccountRepository repo = context.getBean(Fixtures.AccountRepository.class);
        InMemoryFenceStore store = context.getBean(InMemoryFenceStore.class);
        double acceptedBefore = checks("invoices", "accepted");
        for (long id = 1; id <= 300; id++) {
            String region = id % 2 == 0 ? "EU" : "US";
            String number = String.valueOf(id % 3);
            // the effective resource is only right if SpEL evaluated the property reads and toLowerCase()
            FencingToken token = new FencingToken("invoices:" + region.toLowerCase() + "-" + number, id, "h" + id);
            FencingContext.run(token, () -> repo.file(new Fixtures.Invoice(region, number)));
        }
        assertThat(store.maxSeen("invoices:us-1")).hasValue(295); // the last odd id with id % 3 == 1
        assertThat(store.maxSeen("invoices:eu-0")).hasValue(300);
        assertThat(store.size()).isEqualTo(6);
        assertThat(checks("invoices", "accepted") - acceptedBefore).isEqualTo(300);
        // a token for another invoice's resource does not open this one
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("invoices:eu-1", 1000, "h"),
                () -> repo.file(new Fixtures.Invoice("US", "1")))).isInstanceOf(MissingTokenException.class)
                .hasMessageContaining("invoices:us-1");
        // and past SpEL's warm-up the key runs as compiled bytecode
        Method file = Fixtures.AccountRepository.class.getMethod("file", Fixtures.Invoice.class);
        FencePoint point = SupportAccess.pointFor(context.getBean(FencingSupport.class), file,
                Fixtures.MapAccountRepository.class);
        assertThat(compiled(point.key())).isTrue();
    }

    /** Whether SpEL compiled the key's expression as evaluated (SpelExpression keeps the compiled form privately). */
    private static boolean compiled(Object keyFunction) throws ReflectiveOperationException {
        Field expression = keyFunction.getClass().getDeclaredField("evaluated");
        expression.setAccessible(true);
        Field compiledAst = SpelExpression.class.getDeclaredField("compiledAst");
        compiledAst.setAccessible(true);
        return compiledAst.get(expression.get(keyFunction)) != null;
    }

    @Test
    void aKeyValueWithoutAStableTextIsRefusedPerCallAndCountedInvalid() {
        start(Config.class);
        Fixtures.AccountRepository repo = context.getBean(Fixtures.AccountRepository.class);
        Fixtures.MapAccountRepository target = (Fixtures.MapAccountRepository) AopProxyUtils.getSingletonTarget(repo);
        double invalidBefore = checks("accounts", "invalid");
        double missingBefore = checks("accounts", "missing");
        Object entity = new Object();
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("accounts:" + entity, 1, "h"),
                () -> repo.touch(entity))).isInstanceOf(InvalidKeyException.class)
                .hasMessageContaining("AccountRepository.touch(Object)").hasMessageContaining("'#customer'")
                .hasMessageContaining("java.lang.Object");
        assertThat(checks("accounts", "invalid")).isEqualTo(invalidBefore + 1);
        assertThat(checks("accounts", "missing")).isEqualTo(missingBefore);
        FencingContext.run(new FencingToken("accounts:42", 1, "h"), () -> repo.touch(42L));
        assertThat(target.log).containsExactly("touched 42");
    }

    @Test
    void typeLevelAnnotationOnAnInterfaceFencesItsMethods() {
        start(Config.class);
        Fixtures.Journal journal = context.getBean(Fixtures.Journal.class);
        assertThatThrownBy(() -> journal.record("x")).isInstanceOf(MissingTokenException.class)
                .hasMessageContaining("'journal'");
        FencingContext.run(new FencingToken("journal", 1, "h"), () -> journal.record("y"));
        assertThat(((Fixtures.ListJournal) AopProxyUtils.getSingletonTarget(journal)).lines).containsExactly("y");
    }

    @Test
    void objectMethodsOfAFencedTypeAreNotFenced() {
        start(Config.class);
        assertThat(context.getBean(Fixtures.Ledger.class).toString()).isEqualTo("Ledger[]");
    }

    @Configuration
    @EnableFencing(allowInMemoryStore = true)
    static class NoStore {
        @Bean
        Fixtures.Ledger ledger() {
            return new Fixtures.Ledger();
        }
    }

    @Test
    void inMemoryStoreWhenAllowedAndNoneIsDefined() {
        context = new AnnotationConfigApplicationContext(NoStore.class);
        Fixtures.Ledger ledger = context.getBean(Fixtures.Ledger.class);
        FencingContext.run(new FencingToken("ledger", 2, "h"), () -> ledger.append("a"));
        assertThatThrownBy(() -> FencingContext.run(new FencingToken("ledger", 1, "h"), () -> ledger.append("b")))
                .isInstanceOf(StaleTokenException.class);
        assertThat(context.getBeansOfType(FenceStore.class)).isEmpty();
    }
}
