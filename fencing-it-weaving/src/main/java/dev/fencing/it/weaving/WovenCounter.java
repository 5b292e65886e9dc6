package dev.fencing.it.weaving;

import dev.fencing.annotation.Fenced;

import java.io.IOException;
import java.util.concurrent.Callable;

/**
 * Unkeyed fences of every return type the woven aspect routes separately (int, long, float, double, the rest), a
 * body that throws a checked exception, one that runs a callback (to hold the resource, or to call another fenced
 * method on it), and a keyed method returning a primitive.
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

    /** Not fenced. */
    public long total() {
        return total;
    }
}
