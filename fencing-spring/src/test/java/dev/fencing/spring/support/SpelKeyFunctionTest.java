package dev.fencing.spring.support;

import dev.fencing.FencingConfigurationException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.expression.spel.SpelEvaluationException;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** README promise: keys are read-only; types, constructors, beans and assignment are refused and never run. */
class SpelKeyFunctionTest {

    /** Counts every way an expression could reach it. */
    public static final class Probe {
        public static final AtomicInteger TOUCHED = new AtomicInteger();

        public Probe() {
            TOUCHED.incrementAndGet();
        }

        public static long touch() {
            return TOUCHED.incrementAndGet();
        }
    }

    /** A public argument type, so SpEL can compile property reads and method calls on it. */
    public static final class Invoice {
        private final String region;
        private final String number;

        public Invoice(String region, String number) {
            this.region = region;
            this.number = number;
        }

        public String getRegion() {
            return region;
        }

        public String getNumber() {
            return number;
        }
    }

    @SuppressWarnings("unused")
    public void write(long id, Invoice invoice) {
    }

    private static Method write() throws NoSuchMethodException {
        return SpelKeyFunctionTest.class.getMethod("write", long.class, Invoice.class);
    }

    @BeforeEach
    void reset() {
        Probe.TOUCHED.set(0);
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "T(dev.fencing.spring.support.SpelKeyFunctionTest$Probe).touch()",
            "T(java.lang.Runtime).getRuntime().exec('true')",
            "new dev.fencing.spring.support.SpelKeyFunctionTest$Probe()",
            "new java.io.File('x').delete()",
            "@probe.touch()",
            "&probe",
            "#id = 5",
            "#invoice.number = '5'",
            "#id++",
            "--#id",
            "#p0 + #id(1)"})
    void unsafeKeysAreRefusedWhenCompiledNamingTheMethodAndKey(String key) {
        assertThatThrownBy(() -> SpelKeyFunction.compile(key, write(), "Repo.write(long, Invoice)"))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("Repo.write(long, Invoice)").hasMessageContaining("'" + key + "'")
                .hasMessageContaining("read-only");
        assertThat(Probe.TOUCHED).hasValue(0);
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "T(dev.fencing.spring.support.SpelKeyFunctionTest$Probe).touch()",
            "new dev.fencing.spring.support.SpelKeyFunctionTest$Probe()",
            "@probe.touch()",
            "#id = 5"})
    void theEvaluationContextRefusesThemAgain(String key) {
        // defence in depth: even an expression that skipped the compile-time check cannot run them
        var expression = new SpelExpressionParser().parseExpression(key);
        assertThatThrownBy(() -> expression.getValue(SpelKeyFunction.READ_ONLY, new Object[] {1L}))
                .isInstanceOfAny(SpelEvaluationException.class, UnsupportedOperationException.class);
        assertThat(Probe.TOUCHED).hasValue(0);
    }

    @ParameterizedTest
    @ValueSource(strings = {"#root", "#this"})
    void theArgumentArrayIsNotAKey(String key) {
        assertThatThrownBy(() -> SpelKeyFunction.compile(key, write(), "Repo.write(long, Invoice)"))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("Repo.write(long, Invoice)").hasMessageContaining("argument array");
    }

    @Test
    void aSingleArgumentIsReadDirectlyAnythingElseIsEvaluated() throws Exception {
        assertThat(SpelKeyFunction.compile("#id", write(), "w").parameterIndex()).isEqualTo(0);
        assertThat(SpelKeyFunction.compile("#p1", write(), "w").parameterIndex()).isEqualTo(1);
        assertThat(SpelKeyFunction.compile("#invoice.number", write(), "w").parameterIndex()).isEqualTo(-1);
        assertThat(SpelKeyFunction.compile("#root[0]", write(), "w").parameterIndex()).isEqualTo(-1);
        // the one argument a key reads, for a caller that has the arguments apart (the woven aspect)
        assertThat(SpelKeyFunction.compile("#id", write(), "w").argument()).isEqualTo(0);
        assertThat(SpelKeyFunction.compile("#p1", write(), "w").argument()).isEqualTo(1);
        assertThat(SpelKeyFunction.compile("#invoice.number", write(), "w").argument()).isEqualTo(1);
        assertThat(SpelKeyFunction.compile("#root[0]", write(), "w").argument()).isEqualTo(-1);
        assertThat(SpelKeyFunction.compile("#invoice.number + #id", write(), "w").argument()).isEqualTo(-1);
        assertThat(SpelKeyFunction.compile("#id", write(), "w").keyOfArgument(42L)).isEqualTo(42L);
        assertThat(SpelKeyFunction.compile("#invoice.number", write(), "w").keyOfArgument(new Invoice("eu", "n-1")))
                .isEqualTo("n-1");
        assertThatThrownBy(() -> SpelKeyFunction.compile("#invoice.number + #id", write(), "w").keyOfArgument(1L))
                .isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void anEvaluatedKeyIsCompiledToBytecodeOnceWarmAndStaysCorrect() throws Exception {
        SpelKeyFunction key = SpelKeyFunction.compile("#invoice.region.toLowerCase() + '-' + #invoice.number",
                write(), "Repo.write(long, Invoice)");
        assertThat(compiled(key)).isFalse();
        for (int i = 0; i < 300; i++) {
            String region = i % 2 == 0 ? "EU" : "US";
            assertThat(key.keyOf(new Object[] {0L, new Invoice(region, String.valueOf(i))}))
                    .isEqualTo(region.toLowerCase() + "-" + i);
        }
        assertThat(compiled(key)).as("SpEL compiled the key after its interpreted warm-up").isTrue();
    }

    public record Customer(String id, boolean active) {
    }

    public record Order(Customer customer, long amount) {
    }

    /** Not public: SpEL cannot compile a read of it; the path reads it all the same. */
    static final class HiddenAccount {
        public String getNumber() {
            return "hidden-7";
        }
    }

    public interface Keyed {
        String getKey();
    }

    public static class Base {
        public String getCode() {
            return "base";
        }
    }

    public static class Derived extends Base {
        @Override
        public String getCode() {
            return "derived";
        }
    }

    public static class Flag {
        public boolean isActive() {
            return true;
        }
    }

    /** Read on its own class, SpEL finds {@code getActive()} before the declared type's {@code isActive()}. */
    public static class FlagWithGetter extends Flag {
        public boolean getActive() {
            return false;
        }
    }

    @SuppressWarnings("unused")
    public void paths(Order order, HiddenAccount account, Keyed keyed, Base base, Flag flag, Object any) {
    }

    private static Method paths() throws NoSuchMethodException {
        return SpelKeyFunctionTest.class.getMethod("paths", Order.class, HiddenAccount.class, Keyed.class,
                Base.class, Flag.class, Object.class);
    }

    private static final Map<String, Integer> PATH_PARAMETERS =
            Map.of("order", 0, "p0", 0, "account", 1, "keyed", 2, "base", 3, "flag", 4, "any", 5);

    @ParameterizedTest
    @ValueSource(strings = {"#order.customer.id", "#p0.customer.id", "#order.customer.active", "#order.amount",
            "#account.number", "#keyed.key", "#base.code", "#flag.active", "#order.customer.id.length"})
    void aChainOfGettersIsReadWithoutSpelAndReadsWhatSpelReads(String key) throws Exception {
        SpelKeyFunction function = SpelKeyFunction.compile(key, paths(), "Repo.paths(..)");
        assertThat(function.readsPropertyPath()).isTrue();
        assertThat(function.argument()).isEqualTo(PATH_PARAMETERS.get(key.substring(1, key.indexOf('.'))));
        Keyed keyed = () -> "k-1";
        for (Object[] args : new Object[][] {
                {new Order(new Customer("c-1", true), 300L), new HiddenAccount(), keyed, new Base(), new Flag(), 1},
                {new Order(new Customer("c-2", false), 7L), new HiddenAccount(), keyed, new Derived(),
                        new FlagWithGetter(), 1}}) {
            for (int i = 0; i < 3; i++) { // the second read of a class comes from the verified cache
                Object read = function.keyOf(args);
                Object spel = function.expression().getValue(new ArgumentsEvaluationContext(PATH_PARAMETERS, args));
                assertThat(read).as(key).isEqualTo(spel);
                assertThat(function.keyOfArgument(args[function.argument()])).as(key).isEqualTo(spel);
            }
        }
        Object[] derived = {null, null, null, new Derived(), new FlagWithGetter(), null};
        if (key.equals("#base.code")) {
            assertThat(function.keyOf(derived)).as("the override, as SpEL calls it").isEqualTo("derived");
        }
        if (key.equals("#flag.active")) {
            assertThat(function.keyOf(derived)).as("getActive() on the runtime class, as SpEL finds it")
                    .isEqualTo(false);
        }
    }

    @Test
    void aNullPartOfAPathIsRefusedNamingIt() throws Exception {
        SpelKeyFunction function = SpelKeyFunction.compile("#order.customer.id", paths(), "Repo.paths(..)");
        assertThatThrownBy(() -> function.keyOf(new Object[] {new Order(null, 1L), null, null, null, null, null}))
                .hasMessageContaining("'#order.customer' is null").hasMessageContaining("'id'");
        assertThatThrownBy(() -> function.keyOf(new Object[] {null, null, null, null, null, null}))
                .hasMessageContaining("'#order' is null").hasMessageContaining("'customer'");
        assertThat(function.keyOf(new Object[] {new Order(new Customer(null, true), 1L), null, null, null, null,
                null})).as("a null key is the fence point's to refuse").isNull();
    }

    @ParameterizedTest
    @ValueSource(strings = {"#any.class", "#any.foo", "#order?.customer", "#order.customer.id()",
            "#order.amount + 1", "#base.nothing", "#order.Customer", "#root[0].amount"})
    void anythingButAChainOfGettersIsLeftToSpel(String key) throws Exception {
        assertThat(SpelKeyFunction.compile(key, paths(), "Repo.paths(..)").readsPropertyPath()).as(key).isFalse();
    }

    @ParameterizedTest
    @ValueSource(strings = {"#invoice.region + ':' + #id", "#p1.number + '-' + #a0 + #invoice.region",
            "#invoice.number.length() > 2 ? #invoice.number : #invoice.region", "#root[1].number + #id",
            "#invoice.region.toLowerCase()", "{#id, #p0}[1]"})
    void anEvaluatedKeyReadsItsParametersByPositionAndReadsWhatTheKeyTextSays(String key) throws Exception {
        SpelKeyFunction function = SpelKeyFunction.compile(key, write(), "Repo.write(long, Invoice)");
        assertThat(function.evaluated().getExpressionString()).doesNotContain("#id", "#invoice", "#p", "#a");
        Map<String, Integer> byName = Map.of("id", 0, "p0", 0, "a0", 0, "invoice", 1, "p1", 1, "a1", 1);
        for (int i = 0; i < 300; i++) { // interpreted, then compiled where SpEL can
            Object[] args = {(long) i, new Invoice(i % 2 == 0 ? "EU" : "US", "n-" + i)};
            assertThat(function.keyOf(args)).as(key)
                    .isEqualTo(function.expression().getValue(new ArgumentsEvaluationContext(byName, args)));
        }
    }

    /** SpEL takes a static {@code getId()} as the getter, before the record-style {@code id()}. */
    public static final class StaticId {
        private final String id;

        public StaticId(String id) {
            this.id = id;
        }

        public static String getId() {
            return "STATIC";
        }

        public String id() {
            return id;
        }
    }

    public static class WithId {
        public String id() {
            return "instance";
        }
    }

    public static class WithStaticGetId extends WithId {
        public static String getId() {
            return "STATIC";
        }
    }

    /** SpEL stops at a void {@code getId()} (and fails), it does not go on to {@code id()}. */
    public static final class VoidGetter {
        public void getId() {
        }

        public String id() {
            return "viaId()";
        }
    }

    public static final class Tree {
        public String getId() {
            return "t1";
        }
    }

    public static final class Thrower {
        public String getId() {
            throw new AssertionError("boom");
        }
    }

    @SuppressWarnings("unused")
    public void odd(StaticId statics, WithId withId, VoidGetter voids, Tree root, Thrower thrower) {
    }

    @ParameterizedTest
    @ValueSource(strings = {"#order.custmer.id", "#order.customer.idd", "#p0.customer.idd.length"})
    void aPropertyAFinalTypeDoesNotHaveFailsStartupNamingIt(String key) {
        String missing = key.contains("custmer") ? "custmer" : "idd";
        String owner = key.contains("custmer") ? Order.class.getName() : Customer.class.getName();
        assertThatThrownBy(() -> SpelKeyFunction.compile(key, paths(), "Repo.paths(..)"))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("Repo.paths(..)").hasMessageContaining("'" + key + "'")
                .hasMessageContaining("'" + missing + "'").hasMessageContaining(owner)
                .hasMessageContaining("every call would be refused");
    }

    @Test
    void aPropertyOnlyASubclassMayHaveIsLeftToEachCall() throws Exception {
        // Base is not final: a subclass could have getNothing(), so the key is SpEL's to read per call
        SpelKeyFunction key = SpelKeyFunction.compile("#base.nothing", paths(), "Repo.paths(..)");
        assertThatThrownBy(() -> key.keyOf(new Object[] {null, null, null, new Base(), null, null}))
                .isInstanceOf(SpelEvaluationException.class);
    }

    @Test
    void whatSpelReadsItsOwnWayIsLeftToIt() throws Exception {
        Method odd = SpelKeyFunctionTest.class.getMethod("odd", StaticId.class, WithId.class, VoidGetter.class,
                Tree.class, Thrower.class);
        Map<String, Integer> byName = Map.of("statics", 0, "withId", 1, "voids", 2, "root", 3, "thrower", 4);
        Object[] args = {new StaticId("e1"), new WithStaticGetId(), new VoidGetter(), new Tree(), new Thrower()};

        SpelKeyFunction statics = SpelKeyFunction.compile("#statics.id", odd, "Repo.odd(..)");
        assertThat(statics.readsPropertyPath()).as("a static getter is SpEL's").isFalse();
        assertThat(statics.keyOf(args)).isEqualTo("STATIC");

        SpelKeyFunction subclass = SpelKeyFunction.compile("#withId.id", odd, "Repo.odd(..)");
        assertThat(subclass.readsPropertyPath()).isTrue();
        assertThat(subclass.keyOf(new Object[] {null, new WithId(), null, null, null})).isEqualTo("instance");
        assertThat(subclass.keyOf(args)).as("a subclass whose getter SpEL finds first is read by SpEL")
                .isEqualTo("STATIC")
                .isEqualTo(subclass.expression().getValue(new ArgumentsEvaluationContext(byName, args)));

        SpelKeyFunction voids = SpelKeyFunction.compile("#voids.id", odd, "Repo.odd(..)");
        assertThat(voids.readsPropertyPath()).isFalse();
        assertThatThrownBy(() -> voids.keyOf(args)).as("SpEL fails on the void getter")
                .isInstanceOf(SpelEvaluationException.class);

        SpelKeyFunction root = SpelKeyFunction.compile("#root.id", odd, "Repo.odd(..)");
        assertThat(root.readsPropertyPath()).as("#root is the argument array, even with a parameter named root")
                .isFalse();
        assertThat(root.evaluated().getExpressionString()).isEqualTo("#root.id");
        assertThatThrownBy(() -> root.keyOf(args)).isInstanceOf(SpelEvaluationException.class);

        SpelKeyFunction thrower = SpelKeyFunction.compile("#thrower.id", odd, "Repo.odd(..)");
        assertThat(thrower.readsPropertyPath()).isTrue();
        assertThatThrownBy(() -> thrower.keyOf(args)).as("an Error from a getter is a failed key, as in SpEL")
                .isInstanceOf(RuntimeException.class).hasMessageContaining("'#thrower.id' threw")
                .hasRootCauseInstanceOf(AssertionError.class);
    }

    /** Counts the reads of its getter: a key must read each getter on its path once per call. */
    public static class Holder {
        private final WithId inner;
        int reads;

        public Holder(WithId inner) {
            this.inner = inner;
        }

        public WithId getInner() {
            reads++;
            return inner;
        }
    }

    @SuppressWarnings("unused")
    public void held(Holder holder) {
    }

    @Test
    void aStepSpelReadsItsOwnWayIsReadFromWhereTheHandlesStoppedSoNoGetterRunsTwice() throws Exception {
        SpelKeyFunction key = SpelKeyFunction.compile("#holder.inner.id",
                SpelKeyFunctionTest.class.getMethod("held", Holder.class), "Repo.held(..)");
        assertThat(key.readsPropertyPath()).isTrue();

        Holder plain = new Holder(new WithId());
        assertThat(key.keyOf(new Object[] {plain})).isEqualTo("instance");
        assertThat(plain.reads).isEqualTo(1);

        Holder odd = new Holder(new WithStaticGetId()); // SpEL takes its static getId(), not the handle's id()
        assertThat(key.keyOf(new Object[] {odd})).as("what SpEL reads of the whole path").isEqualTo("STATIC")
                .isEqualTo(key.expression().getValue(new ArgumentsEvaluationContext(Map.of("holder", 0),
                        new Object[] {new Holder(new WithStaticGetId())})));
        assertThat(odd.reads).as("getInner() runs once for the call").isEqualTo(1);

        Holder none = new Holder(null);
        assertThatThrownBy(() -> key.keyOf(new Object[] {none})).hasMessageContaining("'#holder.inner' is null");
        assertThat(none.reads).isEqualTo(1);
    }

    @Test
    void aKeySpelCannotCompileIsInterpretedByNameOnceWarm() throws Exception {
        // HiddenAccount is not public: SpEL cannot compile an expression that reads it
        SpelKeyFunction hidden = SpelKeyFunction.compile("#account.number + ':' + #order.amount", paths(), "op");
        SpelKeyFunction open = SpelKeyFunction.compile("#order.customer.id.toUpperCase() + ':' + #order.customer.id",
                paths(), "op");
        for (long i = 0; i < 400; i++) {
            Object[] args = {new Order(new Customer("c-" + i, true), i), new HiddenAccount(), null, null, null, null};
            assertThat(hidden.keyOf(args)).isEqualTo("hidden-7:" + i);
            assertThat(open.keyOf(args)).isEqualTo("C-" + i + ":c-" + i);
        }
        assertThat(hidden.readsByName()).as("left to SpEL's interpreter, variables by name").isTrue();
        assertThat(open.readsByName()).isFalse();
        assertThat(compiled(open)).isTrue();
    }

    private static boolean compiled(SpelKeyFunction key) throws ReflectiveOperationException {
        Field compiledAst = SpelExpression.class.getDeclaredField("compiledAst");
        compiledAst.setAccessible(true);
        return compiledAst.get(key.evaluated()) != null;
    }

    /**
     * A class compiled without parameter names (the JDK's own, here): the message names both ways to keep them, javac's
     * and ajc's (a new user's trial weaving with ajc had followed javac's advice in vain), and the positional name.
     */
    @Test
    void aKeyByNameOnAMethodWithoutParameterNamesSaysHowToKeepThemUnderJavacAndAjc() throws Exception {
        Method noNames = Long.class.getMethod("toString", long.class);
        assertThat(noNames.getParameters()[0].isNamePresent()).as("the JDK is compiled without -parameters").isFalse();
        assertThatThrownBy(() -> SpelKeyFunction.compile("#id", noNames, "Long.toString(long)"))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("Long.toString(long)")
                .hasMessageContaining("javac's -parameters")
                .hasMessageContaining("<parameters>true</parameters> in the aspectj-maven-plugin")
                .hasMessageContaining("by position, #p0)");
    }
}
