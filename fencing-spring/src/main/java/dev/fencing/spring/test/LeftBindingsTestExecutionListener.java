package dev.fencing.spring.test;

import dev.fencing.context.FencingContext;
import dev.fencing.token.FencingToken;
import org.springframework.core.Conventions;
import org.springframework.core.Ordered;
import org.springframework.test.context.TestContext;
import org.springframework.test.context.TestExecutionListener;

import java.util.List;
import java.util.stream.Collectors;

/**
 * Fails a Spring test that leaves fencing tokens bound on its thread ({@code FencingContext.bind} without closing the
 * scope), and closes what it left, so that the next test on that thread, of this class or another, does not write
 * under its tokens. Checked after each test method (after its {@code @AfterEach} methods) and after each test class
 * (after its {@code @AfterAll} methods); tokens bound on the thread before a test class starts (left by a test this
 * framework does not run) fail the class and are unbound. Registered in
 * {@code META-INF/spring.factories}, so every test run by Spring's TestContext framework has it.
 */
public class LeftBindingsTestExecutionListener implements TestExecutionListener, Ordered {

    private static final String CLASS_MARK = Conventions.getQualifiedAttributeName(
            LeftBindingsTestExecutionListener.class, "classMark");
    private static final String METHOD_MARK = Conventions.getQualifiedAttributeName(
            LeftBindingsTestExecutionListener.class, "methodMark");

    /**
     * Takes the class's mark; a thread that has tokens bound before the class starts got them from a test that
     * Spring's TestContext framework does not run (a plain JUnit test) or from code outside the tests: the class fails,
     * naming them, and they are unbound, so that its tests do not write under them unseen.
     */
    @Override
    public void beforeTestClass(TestContext testContext) {
        List<FencingToken> before = FencingContext.closeAll();
        testContext.setAttribute(CLASS_MARK, FencingContext.mark());
        if (!before.isEmpty()) {
            throw new AssertionError("Fencing tokens were bound on this thread before test class "
                    + testContext.getTestClass().getName() + " started: " + names(before) + ". An earlier test that "
                    + "Spring's TestContext framework does not run (a plain JUnit test), or code outside the tests, "
                    + "left them; they are unbound now, and without that this class's tests would write under them. "
                    + CLOSE_ADVICE);
        }
    }

    @Override
    public void beforeTestMethod(TestContext testContext) {
        testContext.setAttribute(METHOD_MARK, FencingContext.mark());
    }

    @Override
    public void afterTestMethod(TestContext testContext) {
        check(testContext, METHOD_MARK, "Test method " + testContext.getTestClass().getSimpleName() + "."
                + testContext.getTestMethod().getName() + "() (or its @BeforeEach or @AfterEach methods)");
    }

    @Override
    public void afterTestClass(TestContext testContext) {
        check(testContext, CLASS_MARK, "Test class " + testContext.getTestClass().getName()
                + " (its @BeforeAll or @AfterAll methods)");
    }

    private static void check(TestContext testContext, String attribute, String what) {
        Object mark = testContext.removeAttribute(attribute);
        if (!(mark instanceof FencingContext.Mark taken)) {
            return;
        }
        List<FencingToken> left;
        try {
            left = FencingContext.closeSince(taken);
        } catch (IllegalStateException otherThread) {
            return; // the callbacks ran on two threads: this thread's bindings are not the test's to judge
        }
        if (!left.isEmpty()) {
            throw new AssertionError(what + " left fencing tokens bound on its thread: " + names(left)
                    + ". They are unbound now; without that, later tests on this thread would write under them. "
                    + CLOSE_ADVICE);
        }
    }

    private static final String CLOSE_ADVICE = "Close what you bind: try (FencingScope scope = "
            + "FencingContext.bind(token)) { ... }, or FencingContext.run(token, () -> ...)";

    private static String names(List<FencingToken> tokens) {
        return tokens.stream().map(FencingToken::toString).collect(Collectors.joining(", "));
    }

    /** Early, so that its {@code after} callbacks run late, after the other listeners' (transactions rolled back). */
    @Override
    public int getOrder() {
        return 100;
    }
}
