package dev.fencing.issuer;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A value answered after another was seen must be above it (or equal, for a read); a lower one is kept as the why. */
@Timeout(5)
class SequenceWatchTest {

    private final SequenceWatch watch = new SequenceWatch(() -> "Service at here", "its sequence", "wiped",
            value -> "#" + value);

    @Test
    void valuesAboveTheHighestSeenAreAcceptedAndRaiseIt() {
        watch.accept(5, watch.seen(), false, "a node at");
        watch.accept(9, watch.seen(), false, "a node at");
        watch.accept(7, 5, false, "a node at"); // sent before 9 came back: above what was seen when it was sent
        assertThat(watch.seen()).isEqualTo(9);
        assertThat(watch.wentBack()).isNull();
    }

    @Test
    void aValueAtOrBelowTheOneSeenBeforeWentBackAndIsKept() {
        watch.accept(9, watch.seen(), false, "a node at");
        watch.accept(9, watch.seen(), true, "a read at"); // a read does not move the sequence
        SequenceWatch created = new SequenceWatch(() -> "Service at here", "its sequence", "wiped", v -> "#" + v);
        created.accept(9, created.seen(), false, "a node at");
        assertThatThrownBy(() -> created.accept(9, created.seen(), false, "a node at"))
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> watch.accept(3, watch.seen(), true, "a read at"))
                .hasMessageStartingWith("Service at here answered a read at #3, not above #9 which this issuer saw "
                        + "before: its sequence went back (wiped)")
                .hasMessageContaining("offset above every token issued before");
        assertThat(watch.wentBack()).startsWith("Service at here answered a read at #3");
        assertThat(watch.seen()).as("never lowered").isEqualTo(9);
    }

    /**
     * Once the sequence went back, the issuer hands out nothing until a restart, as its message, its probe and the
     * runbook say: a sequence that starts over soon passes the highest value this process saw, while tokens the lost
     * sequence issued above it (to other processes, or read by the fence store) are still in circulation.
     */
    @Test
    void aSequenceThatWentBackStaysRefusedWhenItPassesTheValueSeen() {
        watch.accept(12, watch.seen(), false, "a node at");
        assertThatThrownBy(() -> watch.accept(4, watch.seen(), false, "a node at"))
                .hasMessageContaining("went back");
        assertThatThrownBy(() -> watch.accept(13, watch.seen(), false, "a node at"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("answered a node at #4, not above #12")
                .hasMessageContaining("restart this application");
        assertThatThrownBy(() -> watch.accept(40, watch.seen(), true, "a read at"))
                .hasMessageContaining("went back");
        assertThat(watch.seen()).isEqualTo(12);
    }

    /** A floor read elsewhere (a fence store's max_seen) before the sequence was seen: at or below it went back. */
    @Test
    void aFloorReadElsewhereRefusesValuesAtOrBelowIt() {
        watch.floor(100, "the store's highest");
        watch.floor(50, "a lower one"); // never lowered
        assertThatThrownBy(() -> watch.accept(100, watch.seen(), false, "a node at"))
                .hasMessageStartingWith("Service at here answered a node at #100, not above #100, the store's "
                        + "highest: its sequence went back before this issuer could read it (wiped)");
        assertThat(watch.wentBack()).contains("not above #100, the store's highest");
        assertThatThrownBy(() -> watch.accept(101, watch.seen(), false, "a node at"))
                .as("went back: refused until a restart").hasMessageContaining("not above #100");
        SequenceWatch above = new SequenceWatch(() -> "Service at here", "its sequence", "wiped", v -> "#" + v);
        above.floor(100, "the store's highest");
        above.accept(101, above.seen(), false, "a node at");
        assertThat(above.seen()).isEqualTo(101);
        SequenceWatch read = new SequenceWatch(() -> "Service at here", "its sequence", "wiped", value -> "#" + value);
        read.floor(100, "the store's highest");
        read.accept(100, read.seen(), true, "a read at"); // a read may equal it: it does not move the sequence
        SequenceWatch fresh = new SequenceWatch(() -> "Service at here", "its sequence", "wiped", value -> "#" + value);
        fresh.floor(100, "the store's highest");
        assertThatThrownBy(() -> fresh.accept(99, fresh.seen(), true, "a read at"))
                .hasMessageContaining("answered a read at #99, not above #100, the store's highest");
    }
}
