package dev.fencing.aspectj;

import dev.fencing.annotation.Fenced;
import dev.fencing.FencingConfigurationException;
import dev.fencing.spring.EnableFencing;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Each misconfiguration fails the context refresh with a message naming the method and what to change. */
class StartupErrorsTest {

    static class BlankResource {
        @Fenced(resource = " ")
        public void write() {
        }
    }

    static class UnparsableKey {
        @Fenced(resource = "accounts", key = "#id +")
        public void write(long id) {
        }
    }

    static class UnknownParameter {
        @Fenced(resource = "accounts", key = "#accountId")
        public void write(long id) {
        }
    }

    static class PositionOutOfRange {
        @Fenced(resource = "accounts", key = "#p3")
        public void write(long id) {
        }
    }

    static class PrivateMethod {
        public void api() {
            write();
        }

        @Fenced(resource = "accounts")
        private void write() {
        }
    }

    static class FinalMethod {
        @Fenced(resource = "accounts")
        public final void write() {
        }
    }

    static final class FinalClass {
        @Fenced(resource = "accounts")
        public void write() {
        }
    }

    @Fenced(resource = "accounts")
    static final class FinalFencedType {
        public void write() {
        }
    }

    interface Saver {
        void save();
    }

    /** Final, but its fenced method is on an interface: a JDK proxy fences it. */
    static final class FinalSaver implements Saver {
        @Fenced(resource = "accounts")
        @Override
        public void save() {
        }
    }

    static class StaticMethod {
        @Fenced(resource = "accounts")
        public static void write() {
        }
    }

    static class FinalMethodOfFencedType {
        public void fine() {
        }

        public final void skipped() {
        }
    }

    @Fenced(resource = "accounts")
    static class FencedType extends FinalMethodOfFencedType {
    }

    static class Acquiring {
        @Fenced(resource = "accounts", acquire = true)
        public void open() {
        }
    }

    interface Api {
        void declared();
    }

    static class ImplementsApi implements Api {
        @Override
        public void declared() {
        }

        @Fenced(resource = "accounts")
        public void notOnTheInterface() {
        }
    }

    static class TwoProblems {
        @Fenced(resource = "")
        public void one() {
        }

        @Fenced(resource = "x", key = "#nope")
        public void two(String yes) {
        }
    }

    /** Writes every order: one lock for all of them. */
    static class OrderBatch {
        @Fenced(resource = "orders")
        public void repriceAll() {
        }
    }

    /** Writes one order: a lock per order, the same resource name. */
    static class OrderRepository {
        @Fenced(resource = "orders", key = "#id")
        public void save(long id) {
        }

        @Fenced(resource = "orders", key = "#id")
        public void delete(long id) {
        }
    }

    /** The same resource without a key, from a type-level annotation. */
    @Fenced(resource = "orders")
    static class OrderArchive {
        public void archive(long id) {
        }
    }

    /** The keyed resource spelt with a capital letter. */
    static class CapitalOrders {
        @Fenced(resource = "Orders")
        public void repriceAll() {
        }
    }

    /** An unkeyed resource inside the keyed one's keys. */
    static class EuOrders {
        @Fenced(resource = "orders:eu")
        public void shipAll() {
        }
    }

    /** An unkeyed resource of its own next to the keyed one: no mix. */
    static class OrderTotals {
        @Fenced(resource = "orders-totals")
        public void recompute() {
        }
    }

    /** Checks one order under its own key. */
    public static class KeyedOrders {
        final java.util.List<Long> saved = new java.util.concurrent.CopyOnWriteArrayList<>();

        @Fenced(resource = "orders", key = "#id")
        public void save(long id) {
            saved.add(id);
        }

        public java.util.List<Long> saved() {
            return saved; // read through the proxy, which has no state of its own
        }
    }

    /** Locks one order, then saves it. */
    public static class OrderLocks {
        private final KeyedOrders orders;

        public OrderLocks(KeyedOrders orders) {
            this.orders = orders;
        }

        @Fenced(resource = "orders", key = "#id", acquire = true)
        public void reprice(long id) {
            orders.save(id);
        }
    }

    /** One batch at a time: an unkeyed lock that checks nothing, above the keyed ones. */
    public static class RepriceBatch {
        private final OrderLocks locks;

        public RepriceBatch(OrderLocks locks) {
            this.locks = locks;
        }

        @Fenced(resource = "orders", acquire = true, reportUnchecked = false)
        public void repriceAll() {
            for (long id = 1; id <= 3; id++) {
                locks.reprice(id);
            }
        }
    }

    @Configuration
    @EnableFencing
    static class HierarchicalLocks {
        @Bean
        dev.fencing.store.InMemoryFenceStore store() {
            return new dev.fencing.store.InMemoryFenceStore();
        }

        @Bean
        dev.fencing.issuer.InMemoryTokenIssuer issuer() {
            return new dev.fencing.issuer.InMemoryTokenIssuer();
        }

        @Bean
        KeyedOrders keyedOrders() {
            return new KeyedOrders();
        }

        @Bean
        OrderLocks orderLocks(KeyedOrders orders) {
            return new OrderLocks(orders);
        }

        @Bean
        RepriceBatch repriceBatch(OrderLocks locks) {
            return new RepriceBatch(locks);
        }
    }

    private static String startupFailure(Class<?> beanClass, AdviceMode mode) {
        return startupFailure(mode, beanClass);
    }

    private static String startupFailure(AdviceMode mode, Class<?>... beanClasses) {
        Class<?> config = mode == AdviceMode.PROXY ? ProxyConfig.class : AspectJConfig.class;
        Throwable thrown = null;
        try (AnnotationConfigApplicationContext ctx = new AnnotationConfigApplicationContext()) {
            ctx.register(config);
            for (Class<?> beanClass : beanClasses) {
                ctx.registerBean(beanClass.getSimpleName(), beanClass);
            }
            ctx.refresh();
        } catch (Throwable t) {
            thrown = t;
        }
        assertThat(thrown).as("startup of " + java.util.Arrays.toString(beanClasses) + " must fail").isNotNull();
        Throwable cause = thrown;
        while (!(cause instanceof FencingConfigurationException) && cause.getCause() != null) {
            cause = cause.getCause();
        }
        assertThat(cause).isInstanceOf(FencingConfigurationException.class);
        return cause.getMessage();
    }

    @Configuration
    @EnableFencing(allowInMemoryStore = true)
    static class ProxyConfig {
    }

    @Configuration
    @EnableFencing(mode = AdviceMode.ASPECTJ, allowInMemoryStore = true)
    static class AspectJConfig {
    }

    @Test
    void blankResource() {
        assertThat(startupFailure(BlankResource.class, AdviceMode.PROXY))
                .contains("BlankResource.write()").contains("blank resource");
    }

    @Test
    void keyThatDoesNotParse() {
        assertThat(startupFailure(UnparsableKey.class, AdviceMode.PROXY))
                .contains("UnparsableKey.write(long)").contains("'#id +'").contains("not a valid SpEL expression");
    }

    @Test
    void keyNamingAnUnknownParameter() {
        assertThat(startupFailure(UnknownParameter.class, AdviceMode.PROXY))
                .contains("UnknownParameter.write(long)").contains("#accountId is not a parameter")
                .contains("parameters are id");
    }

    @Test
    void keyPositionOutOfRange() {
        assertThat(startupFailure(PositionOutOfRange.class, AdviceMode.PROXY))
                .contains("PositionOutOfRange.write(long)").contains("#p3 is out of range");
    }

    @Test
    void privateMethodUnderProxies() {
        assertThat(startupFailure(PrivateMethod.class, AdviceMode.PROXY))
                .contains("PrivateMethod.write()").contains("is private").contains("ASPECTJ");
    }

    @Test
    void finalMethodUnderProxies() {
        assertThat(startupFailure(FinalMethod.class, AdviceMode.PROXY))
                .contains("FinalMethod.write()").contains("is final");
    }

    @Test
    void aFinalClassUnderProxiesFailsStartupWithWhatToDoUnlessAnInterfaceDeclaresTheMethod() {
        assertThat(startupFailure(FinalClass.class, AdviceMode.PROXY))
                .contains("StartupErrorsTest.FinalClass.write()").contains("the final class")
                .contains("mode = AdviceMode.ASPECTJ");
        assertThat(startupFailure(FinalFencedType.class, AdviceMode.PROXY)).contains("FinalFencedType.write()")
                .contains("the final class");
        try (AnnotationConfigApplicationContext ctx = new AnnotationConfigApplicationContext()) {
            ctx.register(ProxyConfig.class);
            ctx.registerBean("saver", FinalSaver.class);
            ctx.refresh();
            Saver saver = ctx.getBean(Saver.class);
            assertThat(org.springframework.aop.support.AopUtils.isJdkDynamicProxy(saver)).isTrue();
            org.assertj.core.api.Assertions.assertThatThrownBy(saver::save)
                    .isInstanceOf(dev.fencing.context.MissingTokenException.class);
        }
        // ... unless proxies subclass (Spring Boot's default): then it fails too, saying how to use the interface
        Throwable thrown = null;
        try (AnnotationConfigApplicationContext ctx = new AnnotationConfigApplicationContext()) {
            ctx.register(ClassProxyConfig.class);
            ctx.registerBean("saver", FinalSaver.class);
            ctx.refresh();
        } catch (RuntimeException e) {
            thrown = e;
        }
        assertThat(thrown).isNotNull();
        assertThat(org.springframework.core.NestedExceptionUtils.getMostSpecificCause(thrown))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("FinalSaver.save()").hasMessageContaining("spring.aop.proxy-target-class=false");
    }

    @Configuration
    @EnableFencing(allowInMemoryStore = true, proxyTargetClass = true)
    static class ClassProxyConfig {
    }

    @Test
    void finalMethodReachedByATypeLevelAnnotation() {
        String message = startupFailure(FencedType.class, AdviceMode.PROXY);
        assertThat(message).contains("FencedType.skipped()").contains("is final").doesNotContain("fine()");
    }

    @Test
    void staticMethod() {
        assertThat(startupFailure(StaticMethod.class, AdviceMode.PROXY))
                .contains("StaticMethod.write()").contains("static");
    }

    @Test
    void acquireWithoutAnIssuer() {
        assertThat(startupFailure(Acquiring.class, AdviceMode.PROXY))
                .contains("Acquiring.open()").contains("TokenIssuer");
    }

    @Test
    void methodMissingFromTheJdkProxyInterface() {
        assertThat(startupFailure(ImplementsApi.class, AdviceMode.PROXY))
                .contains("ImplementsApi.notOnTheInterface()").contains("JDK interface proxy")
                .contains("proxyTargetClass = true");
    }

    @Test
    void oneResourceFencedWithAndWithoutAKey() {
        String message = startupFailure(AdviceMode.PROXY, OrderBatch.class, OrderRepository.class, OrderArchive.class);
        assertThat(message)
                .contains("resource 'orders' is checked without a key by StartupErrorsTest.OrderArchive.archive(long), "
                        + "StartupErrorsTest.OrderBatch.repriceAll() and with a key by "
                        + "StartupErrorsTest.OrderRepository.delete(long), "
                        + "StartupErrorsTest.OrderRepository.save(long)")
                .contains("'orders' and 'orders:<key>' are separate resources")
                .contains("hold an unkeyed lock that checks nothing (acquire = true) "
                        + "and call a keyed method per entity")
                .contains("resource = \"orders-totals\"");
        assertThat(message.split("resource 'orders' is checked")).as("one problem for the resource").hasSize(2);
    }

    @Test
    void aMethodFencedThroughAnErasedGenericSignatureIsNamedOnce() {
        String message;
        Throwable thrown = null;
        try (AnnotationConfigApplicationContext ctx = new AnnotationConfigApplicationContext()) {
            ctx.register(ProxyConfig.class);
            ctx.registerBean(OrderRepository.class);
            // a Spring Data repository: a JDK proxy of an interface that overrides a generic supertype's method
            ctx.registerBean("orderLedger", OrderLedger.class, () -> (OrderLedger) java.lang.reflect.Proxy
                    .newProxyInstance(OrderLedger.class.getClassLoader(), new Class<?>[] {OrderLedger.class},
                            (proxy, method, args) -> null));
            ctx.refresh();
        } catch (Throwable t) {
            thrown = t;
        }
        assertThat(thrown).isNotNull();
        message = String.valueOf(thrown.getMessage());
        assertThat(message).contains("resource 'orders' is checked without a key by "
                + "StartupErrorsTest.OrderLedger.saveAndFlush(LedgerEntry) and with a key by");
        assertThat(message).doesNotContain("saveAndFlush(Object)");
    }

    /** A generic supertype, as Spring Data's {@code JpaRepository}. */
    interface GenericLedger<T> {
        <S extends T> S saveAndFlush(S entity);
    }

    record LedgerEntry(long id) {
    }

    interface OrderLedger extends GenericLedger<LedgerEntry> {
        @Override
        @Fenced(resource = "orders")
        <S extends LedgerEntry> S saveAndFlush(S entity);
    }

    @Test
    void resourceNamesThatDifferInCaseOnly() {
        String message = startupFailure(AdviceMode.PROXY, CapitalOrders.class, OrderRepository.class);
        assertThat(message).contains("resources 'Orders' (StartupErrorsTest.CapitalOrders.repriceAll()) and "
                + "'orders' (StartupErrorsTest.OrderRepository.delete(long), "
                + "StartupErrorsTest.OrderRepository.save(long)) differ in letter case only");
    }

    @Test
    void anUnkeyedResourceInsideAKeyedOnesKeys() {
        String message = startupFailure(AdviceMode.PROXY, EuOrders.class, OrderRepository.class);
        assertThat(message)
                .contains("resource 'orders:eu', checked without a key by StartupErrorsTest.EuOrders.shipAll()"
                + ", lies inside the keys of resource 'orders'").contains("a key whose text is 'eu'");
    }

    /** An unkeyed lock that only acquires, above keyed checks: every write is checked under its own key. */
    @Test
    void anUnkeyedLockAboveKeyedChecksStartsAndRuns() {
        try (AnnotationConfigApplicationContext ctx = new AnnotationConfigApplicationContext(HierarchicalLocks.class)) {
            ctx.getBean(RepriceBatch.class).repriceAll();
            assertThat(ctx.getBean(KeyedOrders.class).saved()).containsExactly(1L, 2L, 3L);
            dev.fencing.store.InMemoryFenceStore store = ctx.getBean(dev.fencing.store.InMemoryFenceStore.class);
            assertThat(store.maxSeen("orders:1")).isPresent();
            assertThat(store.maxSeen("orders:3")).isPresent();
            assertThat(store.maxSeen("orders")).as("the batch's lock checks nothing").isEmpty();
        }
    }

    @Test
    void keyedResourceBesideAnUnkeyedOneOfAnotherNameStarts() {
        try (AnnotationConfigApplicationContext ctx = new AnnotationConfigApplicationContext()) {
            ctx.register(ProxyConfig.class);
            ctx.registerBean("repository", OrderRepository.class);
            ctx.registerBean("totals", OrderTotals.class);
            ctx.refresh();
            assertThat(ctx.getBean(OrderRepository.class)).isNotNull();
        }
    }

    @Test
    void everyProblemIsListedAtOnce() {
        assertThat(startupFailure(TwoProblems.class, AdviceMode.PROXY))
                .contains("TwoProblems.one()").contains("TwoProblems.two(String)");
    }

    @Test
    void aspectjModeRefusesClassesThatWereNotWoven() {
        // these test classes are compiled by javac, not woven: in ASPECTJ mode they would run unfenced
        assertThat(startupFailure(FinalMethod.class, AdviceMode.ASPECTJ))
                .contains("FinalMethod.write()").contains("was not woven");
    }

    /**
     * A method named as ajc names a moved body ({@code write_aroundBody0}) is no proof that FencingAspect wove
     * {@code write()}: any around advice (a woven {@code @Transactional}) moves bodies so, and this class was not
     * woven at all. ASPECTJ mode refuses it; PROXY mode fences it (it took the class for one FencingAspect wove).
     */
    @Test
    void aBodyNamedAsAjcNamesItIsNoProofOfTheFencesWeaving() {
        assertThat(startupFailure(AroundBodyLookalike.class, AdviceMode.ASPECTJ))
                .contains("AroundBodyLookalike.write() is @Fenced but " + AroundBodyLookalike.class.getName()
                        + " was not woven with FencingAspect");
        try (AnnotationConfigApplicationContext ctx = new AnnotationConfigApplicationContext()) {
            ctx.register(ProxyConfig.class);
            ctx.registerBean("lookalike", AroundBodyLookalike.class);
            ctx.refresh();
            AroundBodyLookalike proxied = ctx.getBean(AroundBodyLookalike.class);
            assertThatThrownBy(proxied::write).isInstanceOf(dev.fencing.context.MissingTokenException.class);
        }
    }

    static class AroundBodyLookalike {
        @Fenced(resource = "lookalike")
        public void write() {
        }

        static void write_aroundBody0() {
        }
    }

    /** A composed type-level annotation carrying {@code @Fenced}: Spring's search finds it, weaving does not. */
    @Target(ElementType.TYPE)
    @Retention(RetentionPolicy.RUNTIME)
    @Fenced(resource = "composed", key = "#id")
    @interface ComposedFence {
    }

    @ComposedFence
    static class ComposedFencedType {
        public void write(long id) {
        }
    }

    /**
     * Under weaving, {@code @Fenced} carried by a composed annotation is refused, naming the method and the annotation
     * to write instead; under proxies it fences (docs/weaving.md).
     */
    @Test
    void aComposedAnnotationIsRefusedUnderWeavingAndFencesUnderProxies() {
        assertThat(startupFailure(ComposedFencedType.class, AdviceMode.ASPECTJ))
                .contains("ComposedFencedType.write(long) gets @Fenced from @ComposedFence ("
                        + ComposedFence.class.getName() + ") on type " + ComposedFencedType.class.getName())
                .contains("put @Fenced(resource = \"composed\", key = \"#id\") itself on "
                        + "StartupErrorsTest.ComposedFencedType.write(long) or on "
                        + ComposedFencedType.class.getName())
                .doesNotContain("ComposedFencedType.write(long) is @Fenced but");
        try (AnnotationConfigApplicationContext ctx = new AnnotationConfigApplicationContext()) {
            ctx.register(ProxyConfig.class);
            ctx.registerBean("composed", ComposedFencedType.class);
            ctx.refresh();
            ComposedFencedType proxied = ctx.getBean(ComposedFencedType.class);
            assertThatThrownBy(() -> proxied.write(7)).isInstanceOf(dev.fencing.context.MissingTokenException.class)
                    .hasMessageContaining("composed:7");
        }
    }

    @Test
    void aspectjModeRefusesAnnotationsOnlyOnAnInterfaceMethod() {
        assertThat(startupFailure(MapAccountRepository.class, AdviceMode.ASPECTJ))
                .contains("MapAccountRepository.deposit(long, long)")
                .contains("AspectJ weaving cannot see");
    }

    /**
     * A method a class inherits from a superclass, fenced by an interface of the class: the message offers the
     * override in the class (this class alone) before the superclass's method (every class that inherits it).
     */
    @Test
    void aspectjModeNamesTheOverrideForAnInheritedMethodFencedByTheClasssInterface() {
        assertThat(startupFailure(InheritingJournal.class, AdviceMode.ASPECTJ))
                .contains("InheritingJournal.append(String)").contains("AspectJ weaving cannot see")
                .contains("override append in " + InheritingJournal.class.getName()
                        + " and put @Fenced on the override (this class alone), or repeat @Fenced on "
                        + "StartupErrorsTest.PlainJournal.append(String) (every class that inherits it)")
                // a final method cannot be overridden: the inherited method is the one place
                .contains("FencedType.skipped() gets @Fenced from type " + FencedType.class.getName()
                        + ", which AspectJ weaving cannot see (it matches annotations on the executing method or its "
                        + "declaring class only); repeat @Fenced on StartupErrorsTest.FinalMethodOfFencedType.skipped()"
                        + ", or use PROXY mode");
    }

    interface Journal {
        @Fenced(resource = "journal")
        void append(String line);
    }

    static class PlainJournal {
        public void append(String line) {
        }
    }

    static class InheritingJournal extends PlainJournal implements Journal {
    }

    @Test
    void negativeAcquireTimeout() {
        @SuppressWarnings("unused")
        Class<?> unused = NegativeTimeout.class;
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(NegativeTimeout.class).close())
                .rootCause().hasMessageContaining("acquireTimeoutMillis = -1");
    }

    @Configuration
    @EnableFencing(acquireTimeoutMillis = -1)
    static class NegativeTimeout {
    }

    /** A repository whose interface carries the annotation, as Spring Data repositories do. */
    interface AccountRepository {
        @Fenced(resource = "accounts", key = "#accountId")
        void deposit(long accountId, long amount);
    }

    static class MapAccountRepository implements AccountRepository {
        @Override
        public void deposit(long accountId, long amount) {
        }
    }
}
