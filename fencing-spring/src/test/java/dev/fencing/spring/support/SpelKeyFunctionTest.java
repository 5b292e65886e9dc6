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
        var context = new ArgumentsEvaluationContext(Map.of("id", 0), new Object[] {1L});
        assertThatThrownBy(() -> expression.getValue(context))
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

    private static boolean compiled(SpelKeyFunction key) throws ReflectiveOperationException {
        Field compiledAst = SpelExpression.class.getDeclaredField("compiledAst");
        compiledAst.setAccessible(true);
        return compiledAst.get(key.expression()) != null;
    }
}
