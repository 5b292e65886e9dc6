package dev.fencing.aspectj;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import dev.fencing.annotation.FencingKey;
import dev.fencing.token.FencingToken;
import dev.fencing.spring.EnableFencing;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Items 1-3 and 22 at startup: a fenced method that could never be fenced soundly (an asynchronous result, a key
 * without a stable text, a resource over the length limit, a key that is not read-only) fails the context refresh,
 * in PROXY and ASPECTJ mode alike, naming the method and why.
 */
class UnfenceableMethodsTest {

    static class Entity {
        long id;
    }

    static class ReturnsFuture {
        @Fenced(resource = "accounts")
        public CompletableFuture<Void> write() {
            return CompletableFuture.completedFuture(null);
        }
    }

    static class ReturnsPlainFuture {
        @Fenced(resource = "accounts")
        public Future<?> write() {
            return CompletableFuture.completedFuture(null);
        }
    }

    static class ReturnsMono {
        @Fenced(resource = "accounts", key = "#id")
        public Mono<Void> write(long id) {
            return Mono.empty();
        }
    }

    @Fenced(resource = "accounts")
    static class FencedTypeReturningFlux {
        public Flux<String> stream() {
            return Flux.empty();
        }
    }

    /** The JVM signature the Kotlin compiler gives {@code suspend fun save(id: Long)}. */
    static class Suspending {
        @Fenced(resource = "accounts", key = "#id")
        public Object save(long id, kotlin.coroutines.Continuation<? super kotlin.Unit> completion) {
            return kotlin.Unit.INSTANCE;
        }
    }

    @Fenced(resource = "accounts")
    static class FencedTypeWithASuspendingMethod {
        public Object save(kotlin.coroutines.Continuation<? super kotlin.Unit> completion) {
            return kotlin.Unit.INSTANCE;
        }
    }

    static class ReturnsDeferred {
        @Fenced(resource = "accounts")
        public kotlinx.coroutines.Deferred<kotlin.Unit> write() {
            return kotlinx.coroutines.CompletableDeferredKt.CompletableDeferred(kotlin.Unit.INSTANCE);
        }
    }

    static class ReturnsFlow {
        @Fenced(resource = "accounts")
        public kotlinx.coroutines.flow.Flow<String> write() {
            return kotlinx.coroutines.flow.FlowKt.emptyFlow();
        }
    }

    /** What kotlinc makes of {@code class PlainWriter { @Fenced(...) fun write() {} }}: final, with kotlin.Metadata. */
    @kotlin.Metadata(k = 1)
    static final class KotlinFinalClass {
        @Fenced(resource = "accounts")
        public void write() {
        }
    }

    /** ... of {@code @Component object Writer { @Fenced(...) fun write() {} }}. */
    @kotlin.Metadata(k = 1)
    static final class KotlinObject {
        public static final KotlinObject INSTANCE = new KotlinObject();

        @Fenced(resource = "accounts")
        public void write() {
        }
    }

    /** ... of {@code open class Writer { @Fenced(...) fun write() {} }}: the function stays final. */
    @kotlin.Metadata(k = 1)
    static class KotlinFinalFunction {
        @Fenced(resource = "accounts")
        public final void write() {
        }
    }

    /** What kotlinc makes of {@code @JvmInline value class AccountId(val v: Long)}, boxed. */
    @kotlin.jvm.JvmInline
    static final class AccountId {
        private final long v;

        AccountId(long v) {
            this.v = v;
        }

        public long getV() {
            return v;
        }

        @Override
        public String toString() {
            return "AccountId(v=" + v + ")";
        }
    }

    /** ... of {@code @Fenced(key = "#id") fun deposit(id: AccountId?)}: the parameter is the boxed class. */
    static class NullableValueClassKey {
        @Fenced(resource = "accounts", key = "#id")
        public void deposit(AccountId id) {
        }
    }

    static class ArrayKey {
        @Fenced(resource = "accounts", key = "#ids")
        public void write(long[] ids) {
        }
    }

    static class EntityKey {
        @Fenced(resource = "accounts", key = "#p0")
        public void write(Entity entity) {
        }
    }

    static class ListKey {
        @Fenced(resource = "accounts", key = "#ids")
        public void write(List<Long> ids) {
        }
    }

    static class ArgumentArrayKey {
        @Fenced(resource = "accounts", key = "#root")
        public void write(long id) {
        }
    }

    static class LongResource {
        @Fenced(resource = "r" + LONG)
        public void write() {
        }
    }

    static final String LONG = "01234567890123456789012345678901234567890123456789012345678901234567890123456789"
            + "01234567890123456789012345678901234567890123456789012345678901234567890123456789"
            + "01234567890123456789012345678901234567890123456789012345678901234567890123456789"
            + "01234567890123456789";

    /** A key that is read from its declared type only per call: accepted at startup. */
    static class Fine {
        @Fenced(resource = "accounts", key = "#id")
        public void byId(long id) {
        }

        @Fenced(resource = "accounts", key = "#customer")
        public void byEntity(Named customer) {
        }

        @Fenced(resource = "accounts", key = "#anything")
        public void byObject(Object anything) {
        }
    }

    static final class Named implements FencingKey {
        @Override
        public String fencingKey() {
            return "n";
        }
    }

    public static final class Probe {
        public static final AtomicInteger TOUCHED = new AtomicInteger();

        public static long touch() {
            return TOUCHED.incrementAndGet();
        }

        public long count() {
            return TOUCHED.incrementAndGet();
        }
    }

    static class TypeKey {
        @Fenced(resource = "accounts", key = "T(dev.fencing.spring.UnfenceableMethodsTest$Probe).touch()")
        public void write(long id) {
        }
    }

    static class RuntimeKey {
        @Fenced(resource = "accounts", key = "T(java.lang.Runtime).getRuntime().availableProcessors()")
        public void write(long id) {
        }
    }

    static class ConstructorKey {
        @Fenced(resource = "accounts", key = "new java.io.File('x').getName()")
        public void write(long id) {
        }
    }

    static class BeanKey {
        @Fenced(resource = "accounts", key = "@probe.count()")
        public void write(long id) {
        }
    }

    static class AssigningKey {
        @Fenced(resource = "accounts", key = "#id = 5")
        public void write(long id) {
        }
    }

    @Configuration
    @EnableFencing(allowInMemoryStore = true)
    static class ProxyConfig {
    }

    @Configuration
    @EnableFencing(mode = AdviceMode.ASPECTJ, allowInMemoryStore = true)
    static class AspectJConfig {
    }

    @BeforeEach
    void reset() {
        Probe.TOUCHED.set(0);
    }

    private static String startupFailure(Class<?> beanClass, AdviceMode mode) {
        Throwable thrown = null;
        try (AnnotationConfigApplicationContext ctx = new AnnotationConfigApplicationContext()) {
            ctx.register(mode == AdviceMode.PROXY ? ProxyConfig.class : AspectJConfig.class);
            ctx.registerBean("probe", Probe.class);
            ctx.registerBean("bean", beanClass);
            ctx.refresh();
        } catch (Throwable t) {
            thrown = t;
        }
        assertThat(thrown).as("startup with " + beanClass.getSimpleName() + " must fail").isNotNull();
        Throwable cause = thrown;
        while (!(cause instanceof FencingConfigurationException) && cause.getCause() != null) {
            cause = cause.getCause();
        }
        assertThat(cause).isInstanceOf(FencingConfigurationException.class);
        return cause.getMessage();
    }

    @ParameterizedTest
    @EnumSource(AdviceMode.class)
    void asynchronousResultsAreRefusedSayingWhy(AdviceMode mode) {
        // a future is fenced only on an @Async method (its fence then runs in the asynchronous body)
        assertThat(startupFailure(ReturnsFuture.class, mode)).contains("ReturnsFuture.write()")
                .contains(CompletableFuture.class.getName()).contains("is not @Async")
                .contains("outside the check");
        assertThat(startupFailure(ReturnsPlainFuture.class, mode)).contains("ReturnsPlainFuture.write()")
                .contains(Future.class.getName()).contains("is not @Async");
    }

    /** Reactor is on this module's test class path, fencing-reactor is not: reactive methods say what to add. */
    @ParameterizedTest
    @EnumSource(AdviceMode.class)
    void kotlinSuspendFunctionsAreRefusedSayingWhy(AdviceMode mode) {
        // its declared result (Object) says nothing: it can return before its write and resume on another thread
        assertThat(startupFailure(Suspending.class, mode)).contains("Suspending.save(long, Continuation)")
                .contains("Kotlin suspend function").contains("outside the atomic unit")
                .contains("withContext(Dispatchers.IO)");
        // a coroutine started by launch or async, and a cold Flow, run after the method returned
        assertThat(startupFailure(ReturnsDeferred.class, mode)).contains("ReturnsDeferred.write()")
                .contains("kotlinx.coroutines.Job").contains("asynchronous result");
        assertThat(startupFailure(ReturnsFlow.class, mode)).contains("ReturnsFlow.write()")
                .contains("kotlinx.coroutines.flow.Flow").contains("asynchronous result");
        assertThat(startupFailure(FencedTypeWithASuspendingMethod.class, mode))
                .contains("FencedTypeWithASuspendingMethod.save(Continuation)").contains("Kotlin suspend function");
    }

    /**
     * A non-null value class parameter is its underlying value on the JVM (key text 1), a nullable one the boxed class
     * (key text AccountId(v=1)): one entity, two resources. The boxed class is refused as a key, at startup where it
     * is declared, per call where a value of it arrives.
     */
    @ParameterizedTest
    @EnumSource(AdviceMode.class)
    void aKotlinValueClassKeyIsRefusedSayingToKeyOnItsValue(AdviceMode mode) {
        assertThat(startupFailure(NullableValueClassKey.class, mode))
                .contains("NullableValueClassKey.deposit(AccountId)").contains("a Kotlin value class")
                .contains("one entity could be fenced as two resources").contains("'#id.v'");
        assertThat(dev.fencing.guard.KeyValues.textOf(new AccountId(1))).as("per call").isNull();
        assertThat(dev.fencing.guard.KeyValues.textOf(1L)).isEqualTo("1");
    }

    @Test
    void finalKotlinClassesAndFunctionsAreRefusedWithTheKotlinFix() {
        assertThat(startupFailure(KotlinFinalClass.class, AdviceMode.PROXY)).contains("KotlinFinalClass.write()")
                .contains("declare it and its @Fenced functions open").contains("kotlin-spring");
        assertThat(startupFailure(KotlinObject.class, AdviceMode.PROXY)).contains("KotlinObject.write()")
                .contains("KotlinObject is a Kotlin object").doesNotContain("kotlin-spring");
        assertThat(startupFailure(KotlinFinalFunction.class, AdviceMode.PROXY))
                .contains("KotlinFinalFunction.write() is final")
                .contains("a Kotlin function is final unless declared open");
        assertThat(startupFailure(ReturnsFuture.class, AdviceMode.PROXY)).as("a Java class gets no Kotlin hint")
                .doesNotContain("Kotlin");
    }

    @ParameterizedTest
    @EnumSource(AdviceMode.class)
    void reactiveResultsWithoutFencingReactorAreRefusedSayingWhatToAdd(AdviceMode mode) {
        assertThat(startupFailure(ReturnsMono.class, mode)).contains("ReturnsMono.write(long)")
                .contains("returns " + Mono.class.getSimpleName()).contains("fencing-reactor");
        assertThat(startupFailure(FencedTypeReturningFlux.class, mode)).contains("FencedTypeReturningFlux.stream()")
                .contains("returns " + Flux.class.getSimpleName()).contains("fencing-reactor");
    }

    @ParameterizedTest
    @EnumSource(AdviceMode.class)
    void keyParametersThatCanNeverHaveAStableTextAreRefused(AdviceMode mode) {
        assertThat(startupFailure(ArrayKey.class, mode)).contains("ArrayKey.write(long[])").contains("'#ids'")
                .contains("long[]");
        assertThat(startupFailure(EntityKey.class, mode)).contains("EntityKey.write(Entity)").contains("'#p0'")
                .contains(Entity.class.getTypeName()).contains("toString()").contains(FencingKey.class.getName());
        assertThat(startupFailure(ListKey.class, mode)).contains("ListKey.write(List)").contains("java.util.List");
        assertThat(startupFailure(ArgumentArrayKey.class, mode)).contains("ArgumentArrayKey.write(long)")
                .contains("argument array");
    }

    @Test
    void aResourceLongerThanTheLimitIsRefused() {
        assertThat(("r" + LONG).length()).isGreaterThan(FencingToken.MAX_PART_LENGTH);
        assertThat(startupFailure(LongResource.class, AdviceMode.PROXY)).contains("LongResource.write()")
                .contains(String.valueOf(("r" + LONG).length()))
                .contains(String.valueOf(FencingToken.MAX_PART_LENGTH));
    }

    @Test
    void keysThatAreNotReadOnlyAreRefusedAndNeverRun() {
        assertThat(startupFailure(TypeKey.class, AdviceMode.PROXY)).contains("TypeKey.write(long)")
                .contains("type reference");
        assertThat(startupFailure(RuntimeKey.class, AdviceMode.PROXY)).contains("RuntimeKey.write(long)")
                .contains("T(java.lang.Runtime)");
        assertThat(startupFailure(ConstructorKey.class, AdviceMode.PROXY)).contains("ConstructorKey.write(long)")
                .contains("constructor");
        assertThat(startupFailure(BeanKey.class, AdviceMode.PROXY)).contains("BeanKey.write(long)")
                .contains("bean reference");
        assertThat(startupFailure(AssigningKey.class, AdviceMode.PROXY)).contains("AssigningKey.write(long)")
                .contains("assignment");
        assertThat(Probe.TOUCHED).hasValue(0);
    }

    @Test
    void keysWhoseTypeOnlyACallCanTellStartFine() {
        try (AnnotationConfigApplicationContext ctx = new AnnotationConfigApplicationContext()) {
            ctx.register(ProxyConfig.class);
            ctx.registerBean("bean", Fine.class);
            ctx.refresh();
            assertThat(ctx.getBean(Fine.class)).isNotNull();
        }
    }
}
