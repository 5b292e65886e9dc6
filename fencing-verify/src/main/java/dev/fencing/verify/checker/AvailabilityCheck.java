package dev.fencing.verify.checker;

import dev.fencing.verify.history.History;
import dev.fencing.verify.history.HistoryEvent;
import dev.fencing.verify.history.NemesisEvent;
import dev.fencing.verify.history.Op;
import dev.fencing.verify.history.OpType;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Counts ok, fail and info outcomes overall, per nemesis window (from a nemesis start to the next stop of the same
 * nemesis and target; a window never stopped lasts to the end of the history) and outside every window. An
 * operation is placed by the time of its completion, or of its invocation when it never completed.
 */
public final class AvailabilityCheck {

    /** The availability figures of {@code history}. */
    public Availability measure(History history) {
        List<Operations.Operation> operations = Operations.of(history);
        long first = Long.MAX_VALUE;
        long last = Long.MIN_VALUE;
        for (HistoryEvent event : history.events()) {
            long mono = event instanceof Op op ? op.mono() : event instanceof NemesisEvent n ? n.mono() : -1;
            if (event instanceof Op || event instanceof NemesisEvent) {
                first = Math.min(first, mono);
                last = Math.max(last, mono);
            }
        }
        if (first > last) {
            first = last = 0;
        }
        List<long[]> spans = windows(history.nemesisEvents(), last);
        List<String> labels = new ArrayList<>();
        for (NemesisEvent start : starts(history.nemesisEvents())) {
            labels.add(start.nemesis() + (start.target() == null ? "" : " " + start.target()));
        }
        long[][] counts = new long[spans.size()][3];
        long[] all = new long[3];
        long[] outside = new long[3];
        for (Operations.Operation operation : operations) {
            int outcome = operation.outcome() == OpType.OK ? 0 : operation.outcome() == OpType.FAIL ? 1 : 2;
            long at = operation.last().mono();
            all[outcome]++;
            boolean inside = false;
            for (int i = 0; i < spans.size(); i++) {
                if (at >= spans.get(i)[0] && at <= spans.get(i)[1]) {
                    counts[i][outcome]++;
                    inside = true;
                }
            }
            if (!inside) {
                outside[outcome]++;
            }
        }
        List<WindowStats> windows = new ArrayList<>();
        for (int i = 0; i < spans.size(); i++) {
            windows.add(new WindowStats(labels.get(i), spans.get(i)[0], spans.get(i)[1],
                    counts[i][0], counts[i][1], counts[i][2]));
        }
        long covered = union(spans);
        return new Availability(new WindowStats("all", first, last, all[0], all[1], all[2]), windows,
                new WindowStats("outside", 0, Math.max(0, last - first - covered), outside[0], outside[1], outside[2]));
    }

    private static List<NemesisEvent> starts(List<NemesisEvent> events) {
        return events.stream().filter(NemesisEvent::isStart).toList();
    }

    /** [start, stop] per start event, in start order. */
    private static List<long[]> windows(List<NemesisEvent> events, long end) {
        List<long[]> spans = new ArrayList<>();
        Map<String, List<long[]>> open = new HashMap<>();
        for (NemesisEvent event : events) {
            String key = event.nemesis() + "\u0000" + event.target();
            if (event.isStart()) {
                long[] span = {event.mono(), end};
                spans.add(span);
                open.computeIfAbsent(key, k -> new ArrayList<>()).add(span);
            } else {
                List<long[]> pending = open.get(key);
                if (pending != null && !pending.isEmpty()) {
                    pending.remove(0)[1] = event.mono();
                }
            }
        }
        return spans;
    }

    /** The total length of the union of the spans. */
    private static long union(List<long[]> spans) {
        List<long[]> sorted = new ArrayList<>(spans);
        sorted.sort((a, b) -> Long.compare(a[0], b[0]));
        long total = 0;
        long from = Long.MIN_VALUE;
        long to = Long.MIN_VALUE;
        for (long[] span : sorted) {
            if (span[0] > to) {
                total += to - from;
                from = span[0];
                to = span[1];
            } else {
                to = Math.max(to, span[1]);
            }
        }
        return total + (to - from);
    }
}
