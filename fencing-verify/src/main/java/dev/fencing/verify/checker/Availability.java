package dev.fencing.verify.checker;

import java.util.List;

/**
 * Availability of a run: operation outcomes over the whole run, per nemesis window, and outside all windows.
 * Not a verdict (faults are expected to cost availability), but what the reports show next to it.
 *
 * @param all     every operation
 * @param windows one entry per nemesis window, in start order
 * @param outside the operations that fell in no window (its time is the run's minus the windows' union)
 */
public record Availability(WindowStats all, List<WindowStats> windows, WindowStats outside) {

    public Availability {
        windows = List.copyOf(windows);
    }
}
