package dev.fencing.spring.test;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Events;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.context.junit.jupiter.SpringJUnitConfig;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.testkit.engine.EventConditions.event;
import static org.junit.platform.testkit.engine.EventConditions.finishedWithFailure;
import static org.junit.platform.testkit.engine.EventConditions.test;
import static org.junit.platform.testkit.engine.TestExecutionResultConditions.instanceOf;
import static org.junit.platform.testkit.engine.TestExecutionResultConditions.message;

/**
 * Spring tests run by JUnit (the test kit runs the nested classes below as a user's suite): a test method that leaves a
 * token bound fails naming it, and the next test on the thread, of the same class or the next, sees nothing; bindings
 * closed by the test, or made around it by {@code @BeforeAll}, pass. Nothing registers the listener but
 * {@code META-INF/spring.factories}.
 */
class LeftBindingsTestExecutionListenerTest {

    /** What the next test saw: whether anything was bound on its thread when it started. */
    static final List<Boolean> EMPTY_AT_START = new CopyOnWriteArrayList<>();

    private static final String CLASS_ORDER = "junit.jupiter.testclass.order.default";

    /** Set while this class runs the suites below: they are a user's suite, not tests of this build on their own. */
    static volatile boolean inTestKit;

    static boolean inTestKit() {
        return inTestKit;
    }

    @Configuration
    static class NoBeans {
    }

    @SpringJUnitConfig(NoBeans.class)
    @EnabledIf("dev.fencing.spring.test.LeftBindingsTestExecutionListenerTest#inTestKit")
    @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
    @Order(1)
    static class LeakingSuite {
        @Test
        @Order(1)
        void leaksABinding() {
            FencingContext.bind(new FencingToken("accounts:15", 1000, "leaky-test"));
        }

        @Test
        @Order(2)
        void nextTestOnTheThread() {
            EMPTY_AT_START.add(FencingContext.isEmpty());
        }

        @Test
        @Order(3)
        void closesWhatItBinds() {
            try (FencingScope scope = FencingContext.bind(new FencingToken("accounts:15", 1001, "tidy"))) {
                assertThat(FencingContext.current("accounts:15").value()).isEqualTo(1001);
            }
        }
    }

    @SpringJUnitConfig(NoBeans.class)
    @EnabledIf("dev.fencing.spring.test.LeftBindingsTestExecutionListenerTest#inTestKit")
    @Order(3)
    static class NextClass {
        @Test
        void firstTestOfTheNextClass() {
            EMPTY_AT_START.add(FencingContext.isEmpty());
        }
    }

    /** A plain JUnit test, which Spring's TestContext framework does not run: nothing checks it itself. */
    @EnabledIf("dev.fencing.spring.test.LeftBindingsTestExecutionListenerTest#inTestKit")
    @Order(1)
    static class PlainLeakingTest {
        @Test
        void leaksABindingUnchecked() {
            FencingContext.bind(new FencingToken("ledger", 77, "plain-leak"));
        }
    }

    /** The next Spring test class on the thread. */
    @SpringJUnitConfig(NoBeans.class)
    @EnabledIf("dev.fencing.spring.test.LeftBindingsTestExecutionListenerTest#inTestKit")
    @Order(2)
    static class SpringClassAfterThePlainOne {
        @Test
        void wouldWriteUnderTheLeftToken() {
            EMPTY_AT_START.add(FencingContext.isEmpty());
        }
    }

    /** Bound for each test by {@code @BeforeEach}, closed by {@code @AfterEach}, and for the class by the class. */
    @SpringJUnitConfig(NoBeans.class)
    @EnabledIf("dev.fencing.spring.test.LeftBindingsTestExecutionListenerTest#inTestKit")
    static class AroundTheTests {
        static FencingScope classScope;
        FencingScope testScope;

        @BeforeAll
        static void bindForTheClass() {
            classScope = FencingContext.bind(new FencingToken("ledger", 3, "class"));
        }

        @AfterAll
        static void closeForTheClass() {
            classScope.close();
        }

        @BeforeEach
        void bindForTheTest() {
            testScope = FencingContext.bind(new FencingToken("accounts:1", 4, "test"));
        }

        @AfterEach
        void closeForTheTest() {
            testScope.close();
        }

        @Test
        void seesBoth() {
            assertThat(FencingContext.current("ledger")).isNotNull();
            assertThat(FencingContext.current("accounts:1")).isNotNull();
        }
    }

    @BeforeEach
    void runTheSuites() {
        inTestKit = true;
    }

    @AfterEach
    void stopRunningThem() {
        inTestKit = false;
    }

    @Test
    void aTestLeavingATokenBoundFailsNamingItAndTheNextTestsStartWithNothingBound() {
        EMPTY_AT_START.clear();
        Events events = EngineTestKit.engine("junit-jupiter")
                .selectors(selectClass(LeakingSuite.class), selectClass(NextClass.class))
                .configurationParameter("junit.jupiter.execution.parallel.enabled", "false")
                .configurationParameter(CLASS_ORDER, "org.junit.jupiter.api.ClassOrderer$OrderAnnotation")
                .execute().testEvents();
        events.assertStatistics(stats -> stats.started(4).succeeded(3).failed(1));
        events.assertThatEvents().haveExactly(1, event(test("leaksABinding"), finishedWithFailure(
                instanceOf(AssertionError.class),
                message(m ->
                        m.contains("LeakingSuite.leaksABinding() (or its @BeforeEach or @AfterEach methods) "
                                + "left fencing tokens bound on its thread")
                        && m.contains("accounts:15") && m.contains("leaky-test")
                        && m.contains("FencingContext.bind(token)")))));
        assertThat(EMPTY_AT_START).containsExactly(true, true);
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    /**
     * A plain JUnit test that leaves a token bound is not checked itself; the next Spring test class on the thread
     * fails before its tests run, naming the token, and the one after starts clean.
     */
    @Test
    void tokensLeftByATestSpringDoesNotRunFailTheNextSpringClassAndAreUnbound() {
        EMPTY_AT_START.clear();
        Events classes = EngineTestKit.engine("junit-jupiter")
                .selectors(selectClass(PlainLeakingTest.class), selectClass(SpringClassAfterThePlainOne.class),
                        selectClass(NextClass.class))
                .configurationParameter("junit.jupiter.execution.parallel.enabled", "false")
                .configurationParameter(CLASS_ORDER, "org.junit.jupiter.api.ClassOrderer$OrderAnnotation")
                .execute().containerEvents();
        classes.assertThatEvents().haveExactly(1, event(
                org.junit.platform.testkit.engine.EventConditions.container("SpringClassAfterThePlainOne"),
                finishedWithFailure(instanceOf(AssertionError.class), message(m -> m.contains(
                        "bound on this thread before test class") && m.contains("ledger#77@plain-leak")))));
        assertThat(EMPTY_AT_START).containsExactly(true); // NextClass's test ran, clean; the failed class's did not
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    @Test
    void bindingsClosedByTheTestOrAroundItPass() {
        EngineTestKit.engine("junit-jupiter").selectors(selectClass(AroundTheTests.class)).execute().testEvents()
                .assertStatistics(stats -> stats.started(1).succeeded(1));
        assertThat(FencingContext.isEmpty()).isTrue();
    }
}
