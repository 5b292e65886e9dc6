package dev.fencing.verify.checker;

import dev.fencing.verify.history.HistoryEvent;

import java.util.List;
import java.util.Objects;

/**
 * One anomaly found in a history: its kind, the resource, a one-line description and the offending events
 * (operations, commit rows) exactly as the history holds them, so a reader can find them in the file.
 *
 * @param kind        what is wrong
 * @param resource    the resource it concerns
 * @param description what was seen, in a sentence
 * @param events      the offending events
 */
public record Anomaly(AnomalyKind kind, String resource, String description, List<HistoryEvent> events) {

    public Anomaly {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(description, "description");
        events = List.copyOf(events);
    }
}
