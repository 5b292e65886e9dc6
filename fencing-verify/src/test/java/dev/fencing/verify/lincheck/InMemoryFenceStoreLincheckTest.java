package dev.fencing.verify.lincheck;

import dev.fencing.rule.DuplicateTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Model-checks {@link InMemoryFenceStore} against {@link Spec}, a sequential statement of the rule: Lincheck runs
 * a few threads of fenced writes on two resources with tokens 1..4 and two holders, explores their interleavings
 * (switching threads at every shared-memory access and lock operation) and fails when a result cannot be explained
 * by some sequential order of the same operations. The guarded write records the token it ran under, so a check
 * and write that were not atomic (a write checked with 2 applied after one with 3) shows up as a wrong
 * {@code lastWritten}.
 */
// Lincheck's model checker switches its threads by spin-waiting: beside the control runs (two runs of eight client
// JVMs each on two cores) a 10 s check took over its 2-minute timeout in CI, so it runs alone, after them
@Isolated
public class InMemoryFenceStoreLincheckTest {

    private final InMemoryFenceStore store = new InMemoryFenceStore();
    private final Map<String, Long> written = new ConcurrentHashMap<>();

    @Operation
    public String write(@Param(gen = IntGen.class, conf = "1:2") int resource,
                        @Param(gen = IntGen.class, conf = "1:4") int token,
                        @Param(gen = IntGen.class, conf = "1:2") int holder) throws Throwable {
        String name = resource(resource);
        long value = token(token);
        try {
            return store.fence(name, new FencingToken(name, value, holder(holder)), () -> {
                written.put(name, value);
                return "accepted";
            });
        } catch (StaleTokenException e) {
            return "stale";
        } catch (DuplicateTokenException e) {
            return "duplicate";
        }
    }

    @Operation
    public long maxSeen(@Param(gen = IntGen.class, conf = "1:2") int resource) {
        return store.maxSeen(resource(resource)).orElse(0);
    }

    @Operation
    public long lastWritten(@Param(gen = IntGen.class, conf = "1:2") int resource) {
        return written.getOrDefault(resource(resource), 0L);
    }

    // the domains, whatever the generators produce (Lincheck may widen a generator's range): 2 resources,
    // tokens 1..4, 2 holders

    static String resource(int resource) {
        return "r" + Math.floorMod(resource, 2);
    }

    static long token(int token) {
        return 1 + Math.floorMod(token - 1, 4);
    }

    static String holder(int holder) {
        return "h" + Math.floorMod(holder, 2);
    }

    @Test
    void modelChecking() {
        new ModelCheckingOptions()
                .iterations(5)
                .invocationsPerIteration(100)
                .threads(3)
                .actorsPerThread(3)
                .actorsBefore(1)
                .actorsAfter(1)
                .sequentialSpecification(Spec.class)
                .check(getClass());
    }

    /** The rule at the resource, sequentially: the table of docs/rule.md, with the write recorded when accepted. */
    public static final class Spec {
        private final Map<String, Long> max = new HashMap<>();
        private final Map<String, String> holders = new HashMap<>();
        private final Map<String, Long> written = new HashMap<>();

        public String write(int resource, int token, int holder) {
            String name = resource(resource);
            long value = token(token);
            Long seen = max.get(name);
            if (seen == null || value > seen) {
                max.put(name, value);
                holders.put(name, holder(holder));
            } else if (value == seen && !holders.get(name).equals(holder(holder))) {
                return "duplicate";
            } else if (value < seen) {
                return "stale";
            }
            written.put(name, value);
            return "accepted";
        }

        public long maxSeen(int resource) {
            return max.getOrDefault(resource(resource), 0L);
        }

        public long lastWritten(int resource) {
            return written.getOrDefault(resource(resource), 0L);
        }
    }
}
