package dev.fencing.benchmarks;

import dev.fencing.annotation.Fenced;
import io.micrometer.core.annotation.Counted;

/**
 * The method every subject calls: it adds to a field, so it cannot be optimised away, and it is annotated for each
 * way of advising it. Proxies advise only what their advice matches, so one class serves all subjects.
 */
public class Target {

    private long sum;

    public long plain(long value) {
        sum += value;
        return sum;
    }

    @Fenced(resource = "total")
    public long fenced(long value) {
        sum += value;
        return sum;
    }

    /**
     * {@link #fenced} with {@link #fencedWithKey}'s parameters and no key: the baseline that tells what the key
     * costs, the proxy's work per argument (its argument array, the reflective call's unboxing) being the same.
     */
    @Fenced(resource = "total")
    public long fencedTwo(long account, long value) {
        sum += value;
        return sum;
    }

    @Fenced(resource = "bench", key = "#account")
    public long fencedWithKey(long account, long value) {
        sum += value;
        return sum;
    }

    /** A key that is a getter of an argument: read through a method handle, no SpEL on the call. */
    @Fenced(resource = "bench", key = "#order.account")
    public long fencedWithPropertyKey(BenchOrder order, long value) {
        sum += value;
        return sum;
    }

    /** A key SpEL evaluates (a method call), on a public type: compiled to bytecode by SpEL once warm. */
    @Fenced(resource = "bench", key = "#order.account.toString()")
    public long fencedWithEvaluatedKey(BenchOrder order, long value) {
        sum += value;
        return sum;
    }

    /** The same key on a package-private argument type, which SpEL cannot compile: interpreted on every call. */
    @Fenced(resource = "bench", key = "#order.account.toString()")
    public long fencedWithInterpretedKey(HiddenOrder order, long value) {
        sum += value;
        return sum;
    }

    /** Touches no shared state, so that threads scale as far as the fence lets them. */
    @Fenced(resource = "bench", key = "#account")
    public long fencedPure(long account, long value) {
        return account + value;
    }

    public long pure(long account, long value) {
        return account + value;
    }

    @Counted("bench.counted")
    public long counted(long value) {
        sum += value;
        return sum;
    }
}
