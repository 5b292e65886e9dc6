package dev.fencing.token;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FencingTokenTest {

    @Test
    void printableEscapesWhatAReaderCannotSeeAndNothingElse() {
        String plain = "orders:42/ü-\uD83D\uDE00 x";
        assertThat(FencingToken.printable(plain)).isSameAs(plain);
        assertThat(FencingToken.printable(null)).isNull();
        assertThat(FencingToken.printable("a\nb\tc\u0000")).isEqualTo("a\\u000Ab\\u0009c\\u0000");
        // format (zero-width space, bidi override, BOM), no-break space, line separator
        assertThat(FencingToken.printable("7\u200B\u202E\uFEFF\u00A0\u2028"))
                .isEqualTo("7\\u200B\\u202E\\uFEFF\\u00A0\\u2028");
        // lone surrogates, either half, anywhere; a backslash doubles so an escape cannot be faked
        assertThat(FencingToken.printable("\uDE00a\uD83D")).isEqualTo("\\uDE00a\\uD83D");
        assertThat(FencingToken.printable("a\\u200B\u200B")).isEqualTo("a\\\\u200B\\u200B");
    }

    @Test
    void unfitNamesWhyAPartCannotBeATokensAndNothingForOneThatCan() {
        assertThat(FencingToken.unfit("resource", "orders:7\u200B")).isNull();
        assertThat(FencingToken.unfit("resource", "orders:7\n")).contains("control character at index 8");
        assertThat(FencingToken.unfit("holder", "h\uD83D")).contains("holder").contains("unpaired").contains("\\uD83D");
        assertThat(FencingToken.unfit("resource", "")).contains("empty");
        assertThat(FencingToken.unfit("resource", "x".repeat(FencingToken.MAX_PART_LENGTH + 1))).contains("longer");
    }

    @Test
    void aMalformedTokensMessageShowsItsTextEscaped() {
        assertThatThrownBy(() -> FencingToken.parse("docs#1@h\u202Eevil#"))
                .isInstanceOf(TokenFormatException.class).hasMessageContaining("h\\u202Eevil");
    }

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

    @Test
    void unpairedSurrogatesAreRefusedNamingThePartAndIndex() {
        assertThatThrownBy(() -> new FencingToken("ab\uD800", 1, "h"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("resource").hasMessageContaining("unpaired").hasMessageContaining("index 2");
        assertThatThrownBy(() -> new FencingToken("r", 1, "\uDC00x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("holder").hasMessageContaining("unpaired").hasMessageContaining("index 0");
        // a high surrogate followed by something else than a low one, and two high ones in a row
        assertThatThrownBy(() -> new FencingToken("\uD83Da", 1, "h")).hasMessageContaining("index 0");
        assertThatThrownBy(() -> new FencingToken("x\uD83D\uD83D\uDE00", 1, "h")).hasMessageContaining("index 1");
        // a proper pair is fine and round-trips
        FencingToken smile = new FencingToken("\uD83D\uDE00", 1, "h\uD83D\uDE00");
        assertThat(FencingToken.parse(smile.toText())).isEqualTo(smile);
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "a\uD800#1@h", "a#1@\uDC00", "a%ED%A0%80#1@h", "a#1@%ED%B0%80", "a%F0%9F#1@h", "a%3F#1@%ED%A0%80"
    })
    void textWithSurrogatesThatAreNotAPairIsNotAToken(String text) {
        assertThatThrownBy(() -> FencingToken.parse(text)).isInstanceOf(TokenFormatException.class);
    }

    /**
     * Property: any string, including lone and misordered surrogates, is either refused as a resource or holder, or
     * makes a token whose text parses back to an equal token; and two different tokens never share one text.
     */
    @Test
    void everyStringIsRefusedOrRoundTripsAndTextsAreUnique() {
        Random random = new Random(20261130);
        java.util.Map<String, FencingToken> byText = new java.util.HashMap<>();
        int refused = 0;
        for (int i = 0; i < 20_000; i++) {
            String resource = randomWithSurrogates(random);
            String holder = randomWithSurrogates(random);
            long value = 1 + random.nextInt(3);
            FencingToken token;
            try {
                token = new FencingToken(resource, value, holder);
            } catch (IllegalArgumentException e) {
                refused++;
                assertThat(hasUnpairedSurrogate(resource) || hasUnpairedSurrogate(holder) || resource.isBlank()
                        || resource.chars().anyMatch(Character::isISOControl)
                        || holder.chars().anyMatch(Character::isISOControl))
                        .as("refused %s / %s: %s", escape(resource), escape(holder), e.getMessage()).isTrue();
                continue;
            }
            assertThat(hasUnpairedSurrogate(resource) || hasUnpairedSurrogate(holder))
                    .as("accepted unpaired surrogate in %s / %s", escape(resource), escape(holder)).isFalse();
            String text = token.toText();
            assertThat(FencingToken.parse(text)).as(escape(resource) + " / " + escape(holder)).isEqualTo(token);
            FencingToken earlier = byText.putIfAbsent(text, token);
            assertThat(earlier == null || earlier.equals(token))
                    .as("%s and %s share the text %s", earlier, token, text).isTrue();
        }
        assertThat(refused).as("the generator produces lone surrogates").isGreaterThan(1_000);
        assertThat(byText.size()).as("and valid tokens").isGreaterThan(1_000);
    }

    private static String randomWithSurrogates(Random random) {
        int len = 1 + random.nextInt(4);
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < len; i++) {
            switch (random.nextInt(6)) {
                case 0 -> sb.append((char) ('a' + random.nextInt(3)));
                case 1 -> sb.append('?');
                case 2 -> sb.append((char) (0xD800 + random.nextInt(2)));         // high surrogate
                case 3 -> sb.append((char) (0xDC00 + random.nextInt(2)));         // low surrogate
                case 4 -> sb.appendCodePoint(0x10000 + random.nextInt(3));        // a proper pair
                default -> sb.append((char) (0xE000 + random.nextInt(2)));         // next to the surrogate range
            }
        }
        return sb.toString();
    }

    private static boolean hasUnpairedSurrogate(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return true;
            }
        }
        return false;
    }

    private static String escape(String s) {
        StringBuilder sb = new StringBuilder();
        s.chars().forEach(c -> sb.append(c < 0x80 ? String.valueOf((char) c) : String.format("\\u%04X", c)));
        return sb.toString();
    }
}
