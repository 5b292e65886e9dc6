package dev.fencing.verify.lincheck;

import dev.fencing.rule.FenceRule;
import dev.fencing.rule.Verdict;
import dev.fencing.token.FencingToken;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The control for {@link InMemoryFenceStoreLincheckTest}: a store (one resource, one holder) that checks the token
 * under a lock but runs the write after releasing it, against the rule's sequential spec. That is the bug the
 * rule's atomicity forbids (a write checked with 2 applied after one with 3) and Lincheck must find it, with
 * settings no stronger than the real store's check; if it did not, that passing check would prove nothing.
 */
// Lincheck's model checker switches its threads by spin-waiting: beside the control runs (two runs of eight client
// JVMs each on two cores) a 10 s check took over its 2-minute timeout in CI, so it runs alone, after them
@Isolated
public class NonAtomicStoreLincheckTest {

    private final Object lock = new Object();
    private boolean seen;
    private long maxSeen;
    private String maxSeenHolder;
    private volatile long written;

    @Operation
    public String write(@Param(gen = IntGen.class, conf = "1:3") int token) {
        FencingToken presented = new FencingToken("r", 1 + Math.floorMod(token, 3), "h");
        synchronized (lock) {
            Verdict verdict = FenceRule.judge(seen, maxSeen, maxSeenHolder, presented);
            if (!verdict.accepted()) {
                return verdict.name();
            }
            if (verdict == Verdict.ACCEPT_NEWER) {
                seen = true;
                maxSeen = presented.value();
                maxSeenHolder = presented.holder();
            }
        }
        written = presented.value();     // the bug: the write runs after the check's lock is released
        return "ACCEPTED";
    }

    @Operation
    public long lastWritten() {
        return written;
    }

    @Test
    void lincheckFindsTheNonAtomicWrite() {
        assertThatThrownBy(() -> new ModelCheckingOptions()
                .iterations(5)
                .invocationsPerIteration(100)
                .threads(2)
                .actorsPerThread(2)
                .actorsBefore(0)
                .actorsAfter(1)
                .sequentialSpecification(Spec.class)
                .check(getClass()))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("Invalid execution results")
                .hasMessageContaining("lastWritten()");
    }

    /** One resource, one holder: accept a token not below max_seen and record it as the last write. */
    public static final class Spec {
        private long maxSeen;
        private long written;

        public String write(int token) {
            long value = 1 + Math.floorMod(token, 3);
            if (value < maxSeen) {
                return "REJECT_STALE";
            }
            maxSeen = value;
            written = value;
            return "ACCEPTED";
        }

        public long lastWritten() {
            return written;
        }
    }
}
