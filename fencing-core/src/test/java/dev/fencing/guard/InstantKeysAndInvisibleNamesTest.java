package dev.fencing.guard;

import dev.fencing.FencingConfigurationException;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.sql.Timestamp;
import java.util.Date;
import java.util.List;
import java.util.TimeZone;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

/**
 * From a re-trial of the key texts and resource names: a {@code java.util.Date} or {@code java.sql.Timestamp} key had
 * a text printed in the JVM's default time zone (two instances in two zones, two resources for one entity); names
 * with invisible characters other than format characters and spaces were accepted; names that need a joiner
 * (Persian, emoji sequences) were refused.
 */
@Timeout(10)
class InstantKeysAndInvisibleNamesTest {

    private final FencingMetrics metrics = FencingMetrics.noop();

    /**
     * One instant as a java.util.Date or java.sql.Timestamp (what JDBC's getTimestamp and many entities still hold) is
     * accepted as a key with a stable text, but its text is printed in the JVM's default time zone: two instances of
     * a service in different zones name one entity with two texts (two locks, two max_seen).
     */
    @Test
    void oneInstantAsADateHasOneTextWhateverTheDefaultZone() {
        long instant = 1_796_547_600_000L; // 2026-12-06T09:00:00Z
        TimeZone before = TimeZone.getDefault();
        try {
            TimeZone.setDefault(TimeZone.getTimeZone("UTC"));
            String dateInUtc = KeyValues.textOf(new Date(instant));
            String timestampInUtc = KeyValues.textOf(new Timestamp(instant));
            TimeZone.setDefault(TimeZone.getTimeZone("Europe/Paris"));
            String dateInParis = KeyValues.textOf(new Date(instant));
            String timestampInParis = KeyValues.textOf(new Timestamp(instant));
            assertThat(List.of(dateInUtc, timestampInUtc)).as("accepted as keys").doesNotContainNull();
            assertThat(dateInParis).as("java.util.Date").isEqualTo(dateInUtc);
            assertThat(timestampInParis).as("java.sql.Timestamp").isEqualTo(timestampInUtc);
        } finally {
            TimeZone.setDefault(before);
        }
    }

    /**
     * Invisible characters other than format characters and spaces (a combining grapheme joiner, a variation
     * selector, Hangul fillers, the braille blank) pass the new name check, and NFKC does not remove them, so the
     * look-alike check does not fold them either: 'orders' and 'orders' + U+034F are two resources at startup.
     */
    @Test
    void aResourceNameWithAnyInvisibleCharacterIsRefused() {
        List<String> accepted = new java.util.ArrayList<>();
        for (String name : List.of("orders\u034f", "orders\ufe0f", "ord\u3164ers", "\u115forders", "ord\u2800ers")) {
            try {
                new FencePoint("Repo.save(Account)", name, null, null, false, metrics);
                accepted.add(name.codePoints().mapToObj(c -> c < 128 ? Character.toString(c)
                        : String.format("\\u%04X", c)).collect(java.util.stream.Collectors.joining()));
            } catch (FencingConfigurationException refused) {
                // as it should
            }
        }
        assertThat(accepted).as("names with an invisible character accepted").isEmpty();
    }

    /**
     * A name in a script that needs a zero-width non-joiner (Persian, some Indic scripts) or an emoji ZWJ sequence is
     * refused as having an invisible character, though it is written as it must be.
     */
    @Test
    void aNameThatNeedsAJoinerIsAccepted() {
        for (String name : List.of("\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",
                "\ud83d\udc69\u200d\ud83d\udcbb-tasks")) {
            assertThatCode(() -> new FencePoint("Repo.save(Account)", name, null, null, false, metrics))
                    .as(FencingToken.printable(name)).doesNotThrowAnyException();
        }
    }
}
