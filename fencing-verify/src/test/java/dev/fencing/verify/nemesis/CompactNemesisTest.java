package dev.fencing.verify.nemesis;

import dev.fencing.verify.history.NemesisEvent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.dao.CannotAcquireLockException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.groups.Tuple.tuple;

/** The compact nemesis's events and tally, on a compactor that needs no database. */
@Timeout(30)
class CompactNemesisTest {

    private final List<NemesisEvent> events = new ArrayList<>();
    private final List<String> tally = new ArrayList<>();
    private final CompactNemesis.Tally record = new CompactNemesis.Tally() {
        @Override
        public void compacted(long rows) {
            tally.add("folded " + rows);
        }

        @Override
        public void refused() {
            tally.add("refused");
        }
    };

    @Test
    void aStrikeCompactsWithItsIdleTimeBetweenAStartAndAStopOnTheFenceTable() {
        List<Duration> asked = new ArrayList<>();
        new CompactNemesis(idle -> {
            asked.add(idle);
            return 3;
        }, Duration.ofSeconds(1), record).strike(new FakeTargets(), new Random(1), events::add);
        assertThat(asked).containsExactly(Duration.ofSeconds(1));
        assertThat(tally).containsExactly("folded 3");
        assertThat(events).extracting(NemesisEvent::f, NemesisEvent::nemesis, NemesisEvent::target)
                .containsExactly(tuple("start", "compact", "fence-table"), tuple("stop", "compact", "fence-table"));
    }

    @Test
    void aCompactionThatCouldNotLockTheTableIsCountedAsRefusedNotThrown() {
        new CompactNemesis(idle -> {
            throw new CannotAcquireLockException("table lock not granted in 5 attempts");
        }, Duration.ofSeconds(1), record).strike(new FakeTargets(), new Random(1), events::add);
        assertThat(tally).containsExactly("refused");
        assertThat(events).extracting(NemesisEvent::f).containsExactly("start", "stop");
    }

    @Test
    void anyOtherFailureIsThrownAfterTheStopEvent() {
        CompactNemesis nemesis = new CompactNemesis(idle -> {
            throw new IllegalStateException("table gone");
        }, Duration.ofSeconds(1), record);
        assertThatThrownBy(() -> nemesis.strike(new FakeTargets(), new Random(1), events::add))
                .hasMessageContaining("compact").hasMessageContaining("table gone");
        assertThat(tally).isEmpty();
        assertThat(events).extracting(NemesisEvent::f).containsExactly("start", "stop");
    }
}
