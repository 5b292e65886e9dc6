package dev.fencing.testsupport.mutants;

import org.junit.platform.engine.discovery.DiscoverySelectors;
import org.junit.platform.testkit.engine.EngineTestKit;

import java.util.List;
import java.util.TreeSet;

/** Runs a contract test class on the Jupiter engine, as Surefire would, and answers the tests that failed. */
public final class ContractRun {

    private ContractRun() {
    }

    /** The names of the test methods of {@code contractTest} that failed (none: the contract let it pass). */
    public static List<String> failures(Class<?> contractTest) {
        TreeSet<String> failed = new TreeSet<>();
        EngineTestKit.engine("junit-jupiter")
                .configurationParameter("junit.jupiter.execution.timeout.default", "2 m")
                .selectors(DiscoverySelectors.selectClass(contractTest))
                .execute()
                .testEvents().failed().stream()
                .forEach(e -> failed.add(e.getTestDescriptor().getDisplayName().replace("()", "")));
        System.out.println("[contract-mutants] " + contractTest.getSimpleName() + " failed: " + failed);
        return List.copyOf(failed);
    }
}
