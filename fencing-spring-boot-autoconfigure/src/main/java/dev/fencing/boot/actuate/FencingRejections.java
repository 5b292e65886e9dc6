package dev.fencing.boot.actuate;

import dev.fencing.guard.RejectionListener;
import dev.fencing.rule.TokenRejectedException;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The last rejections of the application's fence guard (stale or duplicate tokens), in a bounded ring buffer, for
 * {@code /actuator/fencing}. Fed only when a check rejects: an accepted check never reaches it. Holder ids are kept
 * out of what {@link #recent()} shows unless {@code showHolders}.
 */
public class FencingRejections implements RejectionListener {

    /** How many rejections are kept by default. */
    public static final int DEFAULT_CAPACITY = 20;

    private final int capacity;
    private final boolean showHolders;
    private final Clock clock;
    private final ArrayDeque<Rejection> last;

    /**
     * @param capacity    how many rejections are kept, the oldest dropped first
     * @param showHolders whether {@link #recent()} shows the presented token's holder id
     */
    public FencingRejections(int capacity, boolean showHolders) {
        this(capacity, showHolders, Clock.systemUTC());
    }

    FencingRejections(int capacity, boolean showHolders, Clock clock) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1, was " + capacity);
        }
        this.capacity = capacity;
        this.showHolders = showHolders;
        this.clock = clock;
        this.last = new ArrayDeque<>(capacity);
    }

    @Override
    public void rejected(TokenRejectedException rejection) {
        Rejection entry = new Rejection(clock.instant(), rejection.resource(), rejection.presented().value(),
                showHolders ? rejection.presented().holder() : null, rejection.maxSeen(),
                rejection.verdict().outcome(), rejection.operation());
        synchronized (last) {
            if (last.size() == capacity) {
                last.removeFirst();
            }
            last.addLast(entry);
        }
    }

    /** The kept rejections, newest first, as the endpoint shows them. */
    public List<Map<String, Object>> recent() {
        List<Rejection> copy;
        synchronized (last) {
            copy = new ArrayList<>(last);
        }
        List<Map<String, Object>> shown = new ArrayList<>(copy.size());
        for (int i = copy.size() - 1; i >= 0; i--) {
            shown.add(copy.get(i).toMap());
        }
        return shown;
    }

    private record Rejection(Instant time, String resource, long presented, String holder, long maxSeen,
                             String verdict, String method) {
        Map<String, Object> toMap() {
            Map<String, Object> map = new LinkedHashMap<>();
            map.put("time", time.toString());
            map.put("resource", resource);
            map.put("presentedValue", presented); // a number: the problem detail's "presented" is the token's text
            if (holder != null) {
                map.put("holder", holder);
            }
            map.put("maxSeen", maxSeen);
            map.put("verdict", verdict);
            map.put("method", method);
            return map;
        }
    }
}
