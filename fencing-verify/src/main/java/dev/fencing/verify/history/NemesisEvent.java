package dev.fencing.verify.history;

import java.util.Objects;

/**
 * A fault the harness injected ({@code start}) or healed ({@code stop}): {@code nemesis} names the kind (pause,
 * kill, partition, restart-lock-service, kill-backend, ...), {@code target} what it hit (a client, a server, a
 * connection). A start and the next stop of the same nemesis and target bound a nemesis window.
 *
 * @param f       start or stop
 * @param nemesis the kind of fault
 * @param target  what it was applied to, may be null
 * @param wall    epoch millis when recorded
 * @param mono    System.nanoTime() when recorded
 */
public record NemesisEvent(String f, String nemesis, String target, long wall, long mono) implements HistoryEvent {

    public NemesisEvent {
        Objects.requireNonNull(f, "f");
        Objects.requireNonNull(nemesis, "nemesis");
        if (!f.equals("start") && !f.equals("stop")) {
            throw new IllegalArgumentException("nemesis f must be start or stop, was " + f);
        }
    }

    @Override
    public String jsonType() {
        return "nemesis";
    }

    /** Whether this event starts the fault. */
    public boolean isStart() {
        return f.equals("start");
    }
}
