package dev.fencing.benchmarks.woven;

import dev.fencing.annotation.Fenced;

/** Woven at compile time by ajc with FencingAspect (only this package is woven). */
public class WovenTarget {

    private long sum;

    public long plain(long value) {
        sum += value;
        return sum;
    }

    @Fenced(resource = "total-woven")
    public long fenced(long value) {
        sum += value;
        return sum;
    }

    /** Keyed: the woven aspect's keyed bracket for two parameters (bound one by one: no join point, no closure). */
    @Fenced(resource = "bench-woven", key = "#p0")
    public long fencedWithKey(long id, long value) {
        sum += value;
        return sum;
    }

    /** Keyed with no parameter (so a constant key): the argument-free advice, the key over an empty array. */
    @Fenced(resource = "bench-woven", key = "'all'")
    public long fencedWithConstantKey() {
        sum += 1;
        return sum;
    }

    /** Four parameters, unfenced: the baseline of {@link #fencedWithFourArguments}. */
    public String plainFour(long id, long value, String note, Object tag) {
        sum += value;
        return note;
    }

    /**
     * Keyed, four parameters and an object result: the advice for four to six parameters binds them one by one (no
     * join point); before it, such a method took its arguments from AspectJ's join point.
     */
    @Fenced(resource = "bench-woven", key = "#p0")
    public String fencedWithFourArguments(long id, long value, String note, Object tag) {
        sum += value;
        return note;
    }

    /**
     * As {@link #fencedWithFourArguments}, returning a {@code long}: the advice for four to six parameters returns an
     * Object, so a result outside the small {@code Long} cache was boxed (the running sum is); since 682027a a
     * routing advice of its own returns the {@code long}.
     */
    @Fenced(resource = "bench-woven", key = "#p0")
    public long fencedWithFourArgumentsReturningLong(long id, long value, String note, Object tag) {
        sum += value;
        return sum;
    }

    /** Seven parameters, unfenced: the baseline of {@link #fencedWithSevenArguments}. */
    public String plainSeven(long id, long value, String note, Object tag, int a, int b, int c) {
        sum += value + a + b + c;
        return note;
    }

    /**
     * Keyed, seven parameters and an object result, the key the first: past six parameters the aspect binds the first
     * six (the key is among them) and passes the rest on unread.
     */
    @Fenced(resource = "bench-woven", key = "#p0")
    public String fencedWithSevenArguments(long id, long value, String note, Object tag, int a, int b, int c) {
        sum += value + a + b + c;
        return note;
    }

    /** {@link #fencedWithSevenArguments} returning the running sum, a {@code long} outside the {@code Long} cache. */
    @Fenced(resource = "bench-woven", key = "#p0")
    public long fencedWithSevenArgumentsReturningLong(long id, long value, String note, Object tag, int a, int b,
            int c) {
        sum += value + a + b + c;
        return sum;
    }
}
