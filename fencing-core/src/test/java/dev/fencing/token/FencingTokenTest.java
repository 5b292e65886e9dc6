package dev.fencing.token;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FencingTokenTest {

    @Test
    void textFormIsCompactAndReadable() {
        assertThat(new FencingToken("accounts:42", 34, "client-7").toText()).isEqualTo("accounts:42#34@client-7");
        assertThat(new FencingToken("a b", 1, "x@y#z%").toText()).isEqualTo("a%20b#1@x%40y%23z%25");
        assertThat(new FencingToken("café", 9, "h").toText()).isEqualTo("caf%C3%A9#9@h");
    }

    @Test
    void parseReversesToText() {
        FencingToken t = new FencingToken("/locks/accounts:42", Long.MAX_VALUE, "/locks/_c_1-lock-0000000001");
        assertThat(FencingToken.parse(t.toText())).isEqualTo(t);
    }

    @Test
    void randomTokensRoundTrip() {
        Random random = new Random(42);
        for (int i = 0; i < 2_000; i++) {
            FencingToken t = new FencingToken(randomPart(random), 1 + (random.nextLong() & Long.MAX_VALUE - 1),
                    randomPart(random));
            String text = t.toText();
            assertThat(text.length()).isLessThanOrEqualTo(FencingToken.MAX_TEXT_LENGTH);
            assertThat(FencingToken.parse(text)).isEqualTo(t);
        }
    }

    private static String randomPart(Random random) {
        int len = 1 + random.nextInt(20);
        StringBuilder sb = new StringBuilder();
        while (sb.length() < len) {
            int cp = switch (random.nextInt(4)) {
                case 0 -> 'a' + random.nextInt(26);
                case 1 -> 0x20 + random.nextInt(0x5f);
                case 2 -> 0xa0 + random.nextInt(0x700);
                default -> 0x1F600 + random.nextInt(50);
            };
            sb.appendCodePoint(cp);
        }
        String s = sb.toString();
        return s.isBlank() ? "x" + s : s;
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "", "accounts", "accounts#34", "#34@h", "accounts#@h", "accounts#34@", "accounts#0@h", "accounts#-1@h",
            "accounts#034@h", "accounts#3x4@h", "accounts#99999999999999999999@h", "acc ounts#34@h",
            "accounts#34@h%2", "accounts#34@h%zz", "accounts#34@h%2f", "accounts#34@h%41", "accounts#34@h%FF",
            "accounts#34@h@x", "acc#ounts#34@h", "accounts#+34@h", "%20%20#1@h"
    })
    void malformedTextIsAnErrorNeverAToken(String text) {
        assertThatThrownBy(() -> FencingToken.parse(text))
                .isInstanceOf(TokenFormatException.class)
                .hasMessageContaining("fencing token");
    }

    @Test
    void parseErrorSaysWhatAndWhere() {
        assertThatThrownBy(() -> FencingToken.parse("accounts#3x4@h"))
                .hasMessageContaining("'x' at index 10");
        assertThatThrownBy(() -> FencingToken.parse(null)).isInstanceOf(TokenFormatException.class);
        assertThatThrownBy(() -> FencingToken.parse("a".repeat(FencingToken.MAX_TEXT_LENGTH + 1)))
                .isInstanceOf(TokenFormatException.class).hasMessageContaining("longer than");
    }

    @Test
    void invalidTokensCannotBeConstructed() {
        assertThatThrownBy(() -> new FencingToken(" ", 1, "h")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new FencingToken(null, 1, "h")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new FencingToken("r", 0, "h")).hasMessageContaining("positive");
        assertThatThrownBy(() -> new FencingToken("r", -5, "h")).hasMessageContaining("-5");
        assertThatThrownBy(() -> new FencingToken("r", 1, "")).hasMessageContaining("holder");
        assertThatThrownBy(() -> new FencingToken("r\n", 1, "h")).hasMessageContaining("control");
        assertThatThrownBy(() -> new FencingToken("r".repeat(FencingToken.MAX_PART_LENGTH + 1), 1, "h"))
                .hasMessageContaining("longer than");
    }
}
