package dev.fencing.verify.history;

import java.util.Comparator;
import java.util.List;

/**
 * A whole history in file order, with the views the checks need: operation events, nemesis events, commit rows.
 * {@code truncatedLines} counts the unreadable last line a killed writer may leave (0 or 1).
 *
 * @param events         every event, in the order of the file
 * @param truncatedLines how many trailing partial lines the reader dropped
 */
public record History(List<HistoryEvent> events, int truncatedLines) {

    public History {
        events = List.copyOf(events);
    }

    /** A history of exactly these events. */
    public static History of(HistoryEvent... events) {
        return new History(List.of(events), 0);
    }

    /** The operation events, in file order. */
    public List<Op> ops() {
        return events.stream().filter(Op.class::isInstance).map(Op.class::cast).toList();
    }

    /** The nemesis events, by monotonic time. */
    public List<NemesisEvent> nemesisEvents() {
        return events.stream().filter(NemesisEvent.class::isInstance).map(NemesisEvent.class::cast)
                .sorted(Comparator.comparingLong(NemesisEvent::mono)).toList();
    }

    /** The store's commit rows, by sequence number. */
    public List<CommitRow> commits() {
        return events.stream().filter(CommitRow.class::isInstance).map(CommitRow.class::cast)
                .sorted(Comparator.comparingLong(CommitRow::seq)).toList();
    }
}
