package dev.fencing.issuer;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;
import java.util.function.Supplier;

/**
 * The highest value an issuer has seen of its lock service's one sequence for all resources (ZooKeeper's zxid, etcd's
 * revision). A value answered after another was seen must not be below it; one that is means the sequence went back
 * (the service restarted on an empty or older data dir, or another one answers at its address), and its tokens could
 * be below tokens already handed out: the issuer refuses them, fail closed, and reports why from then on. It keeps
 * refusing every value after that, also once the sequence has passed the highest value seen here, until a restart:
 * tokens the lost sequence handed out above that value (to other processes) may still be in circulation.
 */
public final class SequenceWatch {

    private final AtomicLong highest = new AtomicLong();
    private final Supplier<String> service;
    private final String sequence;
    private final String causes;
    private final LongFunction<String> format;
    private volatile String wentBack;
    private volatile long floor = Long.MIN_VALUE;
    private volatile String floorSource;

    /**
     * @param service  names the lock service and its address, e.g. {@code "ZooKeeper at host:2181"}
     * @param sequence what the sequence is, e.g. {@code "the ensemble's transaction ids"}
     * @param causes   how it can go back, for the message
     * @param format   how a value is shown, e.g. {@code "zxid 0x1f"}
     */
    public SequenceWatch(Supplier<String> service, String sequence, String causes, LongFunction<String> format) {
        this.service = Objects.requireNonNull(service, "service");
        this.sequence = Objects.requireNonNull(sequence, "sequence");
        this.causes = Objects.requireNonNull(causes, "causes");
        this.format = Objects.requireNonNull(format, "format");
    }

    /** The highest value seen so far: read before a request whose answer must be above it. */
    public long seen() {
        return highest.get();
    }

    /**
     * Accepts {@code value}, answered to a request sent after {@link #seen()} returned {@code seenBefore}: it must be
     * above it, or equal when {@code mayEqual} (a read, which does not move the sequence).
     *
     * @param what what answered {@code value}, e.g. {@code "the lock node of resource 'r' created at"}
     * @throws IllegalStateException when the sequence went back, now or before (every value is refused from then on,
     *                               until a restart), naming {@code what}, both values and the remedy
     */
    public void accept(long value, long seenBefore, boolean mayEqual, String what) {
        String before = wentBack;
        if (before != null) { // the issuer's message, probe and the runbook: nothing is handed out until a restart
            throw new IllegalStateException(before);
        }
        if (value < seenBefore || value == seenBefore && !mayEqual) {
            String why = service.get() + " answered " + what + " " + format.apply(value) + ", not above "
                    + format.apply(seenBefore) + " which this issuer saw before: " + sequence + " went back (" + causes
                    + "). Its tokens would be below tokens already issued, so none is handed out: treat it as a move "
                    + "to another issuer, with an offset above every token issued before (docs/issuers.md, \"Moving "
                    + "to another issuer\"), and restart this application";
            wentBack = why;
            throw new IllegalStateException(why);
        }
        long below = floor;
        if (value < below || value == below && !mayEqual) { // a floor read elsewhere, before the sequence was seen
            String why = service.get() + " answered " + what + " " + format.apply(value) + ", not above "
                    + format.apply(below) + ", " + floorSource + ": " + sequence + " went back before this issuer "
                    + "could read it (" + causes + "). Its tokens would be below tokens already issued, so none is "
                    + "handed out: treat it as a move to another issuer, with an offset above every token issued "
                    + "before (docs/issuers.md, \"Moving to another issuer\"), and restart this application";
            wentBack = why;
            throw new IllegalStateException(why);
        }
        highest.accumulateAndGet(value, Math::max);
    }

    /**
     * Refuses from now on every value at or below {@code value}, a bound read elsewhere because the sequence itself
     * could not be read (the service unreachable when the application started): a fence store's highest max_seen,
     * which every token of this sequence is above unless the sequence went back. Raises, never lowers.
     *
     * @param source where {@code value} comes from, for the message, e.g. {@code "the fence store's highest
     *               max_seen, read at startup while the lock service could not be asked"}
     */
    public void floor(long value, String source) {
        Objects.requireNonNull(source, "source");
        synchronized (this) {
            if (value > floor) {
                floorSource = source;
                floor = value;
            }
        }
    }

    /** Why the sequence went back since this issuer started, or {@code null} when it never did. */
    public String wentBack() {
        return wentBack;
    }
}
