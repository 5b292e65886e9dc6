package dev.fencing.guard;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** One line per key and interval, the lines held back counted, the keys bounded (overflow key or none). */
class LogPaceTest {

    @Test
    void aKeyIsDueOncePerIntervalWithTheLinesHeldBackSince() {
        LogPace pace = new LogPace(10, 60_000, null);
        assertThat(pace.due("a", 1_000)).isZero();
        assertThat(pace.due("a", 2_000)).isEqualTo(LogPace.NOT_NOW);
        assertThat(pace.due("a", 3_000)).isEqualTo(LogPace.NOT_NOW);
        assertThat(pace.due("b", 3_000)).as("another key keeps its own pace").isZero();
        assertThat(pace.due("a", 61_000)).isEqualTo(2);
        assertThat(pace.due("a", 62_000)).isEqualTo(LogPace.NOT_NOW);
    }

    @Test
    void pastTheBoundKeysShareTheOverflowKeyOrAreNotLogged() {
        LogPace dropping = new LogPace(2, 60_000, null);
        dropping.due("a", 0);
        dropping.due("b", 0);
        assertThat(dropping.due("c", 0)).isEqualTo(LogPace.FULL);
        assertThat(dropping.size()).isEqualTo(2);

        LogPace sharing = new LogPace(2, 60_000, "");
        sharing.due("a", 0);
        sharing.due("b", 0);
        assertThat(sharing.due("c", 0)).as("the overflow key's first line").isZero();
        assertThat(sharing.due("d", 0)).as("shares its pace").isEqualTo(LogPace.NOT_NOW);
    }
}
