package dev.fencing.it.weaving;

import dev.fencing.annotation.Fenced;

import java.io.IOException;
import java.util.concurrent.Callable;

/**
 * Unkeyed fences of every return type the woven aspect routes separately (int, long, float, double, the rest), a
 * body that throws a checked exception, one that runs a callback (to hold the resource, or to call another fenced
 * method on it), and keyed methods of every return type.
 */
public class WovenCounter {

    private long total;

    @Fenced(resource = "woven-counter")
    public int addInt(int value) {
        return (int) (total += value);
    }

    @Fenced(resource = "woven-counter")
    public long addLong(long value) {
        return total += value;
    }

    @Fenced(resource = "woven-counter")
    public float half(float value) {
        return value / 2;
    }

    @Fenced(resource = "woven-counter")
    public double twice(double value) {
        return value * 2;
    }

    @Fenced(resource = "woven-counter")
    public char initial(String text) {
        return text.charAt(0);
    }

    @Fenced(resource = "woven-counter")
    public String describe() {
        return "total " + total;
    }

    @Fenced(resource = "woven-counter")
    public void reset() {
        total = 0;
    }

    @Fenced(resource = "woven-counter")
    public long failWith(IOException failure) throws IOException {
        total++;
        throw failure;
    }

    /** Runs {@code body} under this resource's fence: to hold it, or to call another fenced method on it. */
    @Fenced(resource = "woven-counter")
    public <T> T inside(Callable<T> body) throws Exception {
        return body.call();
    }

    @Fenced(resource = "woven-slots", key = "#slot")
    public long addTo(int slot, long value) {
        return total += value;
    }

    @Fenced(resource = "woven-slots", key = "#slot")
    public int addIntTo(int slot, int value) {
        return (int) (total += value);
    }

    @Fenced(resource = "woven-slots", key = "#slot")
    public float halfOf(int slot, float value) {
        return value / 2;
    }

    @Fenced(resource = "woven-slots", key = "#slot")
    public double twiceOf(int slot, double value) {
        return value * 2;
    }

    @Fenced(resource = "woven-slots", key = "#slot")
    public String describe(String slot) {
        return slot + " total " + total;
    }

    @Fenced(resource = "woven-slots", key = "#slot")
    public long failAt(int slot, IOException failure) throws IOException {
        total++;
        throw failure;
    }

    /** The stack its body runs on, to tell the bracket (the fence in this frame) from the guard's callback. */
    @Fenced(resource = "woven-slots", key = "#slot")
    public StackTraceElement[] stackAt(int slot) {
        return new Throwable().getStackTrace();
    }

    /** Not fenced. */
    public long total() {
        return total;
    }
}
