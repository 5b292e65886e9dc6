package dev.fencing.verify.checker;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class AvailabilityCheckTest {

    private final AvailabilityCheck check = new AvailabilityCheck();

    @Test
    void countsOutcomesOverallPerNemesisWindowAndOutside() {
        HistoryBuilder h = new HistoryBuilder()
                .call(1, 0, "add", "s", 1L, 1L)                                       // outside
                .nemesis("start", "pause", "client-2")
                .call(1, 1, "add", "s", 1L, 2L)                                       // in the pause
                .invoke(2, 0, "add", "s", 3L).fail(2, 0, "add", "s", "stale token")   // in the pause
                .nemesis("stop", "pause", "client-2")
                .invoke(3, 0, "add", "s", 4L).info(3, 0, "add", "s", "timeout")       // outside
                .nemesis("start", "kill", "client-3")
                .invoke(3, 1, "add", "s", 5L);                                        // never completed: info,
                                                                                      // in the kill
        Availability availability = check.measure(h.build());

        assertThat(availability.all()).extracting(WindowStats::ok, WindowStats::fail, WindowStats::info)
                .containsExactly(2L, 1L, 2L);
        assertThat(availability.windows()).hasSize(2);
        WindowStats pause = availability.windows().get(0);
        assertThat(pause.label()).isEqualTo("pause client-2");
        assertThat(pause).extracting(WindowStats::ok, WindowStats::fail, WindowStats::info).containsExactly(1L, 1L, 0L);
        assertThat(pause.okRate()).isEqualTo(0.5);
        assertThat(pause.seconds()).isEqualTo(0.005);             // start at tick 3, stop at tick 8 (1 ms each)
        WindowStats kill = availability.windows().get(1);
        assertThat(kill).extracting(WindowStats::ok, WindowStats::fail, WindowStats::info).containsExactly(0L, 0L, 1L);
        assertThat(kill.toMono()).isEqualTo(12_000_000L);           // never stopped: lasts to the last event
        assertThat(availability.outside()).extracting(WindowStats::ok, WindowStats::fail, WindowStats::info)
                .containsExactly(1L, 0L, 1L);
        assertThat(availability.outside().seconds()).isEqualTo(0.005);   // ticks 1..12: 5 in the pause, 1 in the kill
    }

    @Test
    void anEmptyHistoryHasNoOperations() {
        Availability availability = check.measure(new HistoryBuilder().build());
        assertThat(availability.all().total()).isZero();
        assertThat(availability.all().okRate()).isZero();
        assertThat(availability.windows()).isEmpty();
    }
}
