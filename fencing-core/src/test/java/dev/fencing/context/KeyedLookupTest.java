package dev.fencing.context;

import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link FencingContext#current(String, Object)}: the keyed lookup finds exactly what the built text would. */
class KeyedLookupTest {

    @AfterEach
    void nothingLeaks() {
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    @Test
    void findsTheTokenOfTheKeyedResourceByNumberAndByText() {
        FencingToken a42 = new FencingToken("accounts:42", 7, "h");
        FencingToken other = new FencingToken("accounts:4", 8, "h");
        try (FencingScope ignored = FencingContext.bind(other, a42)) {
            assertThat(FencingContext.current("accounts", 42L)).isSameAs(a42);
            assertThat(FencingContext.current("accounts", 42)).isSameAs(a42);
            assertThat(FencingContext.current("accounts", "42")).isSameAs(a42);
            assertThat(FencingContext.current("accounts", 4L)).isSameAs(other);
            assertThat(FencingContext.current("accounts", 420L)).isNull();
            assertThat(FencingContext.current("accounts", -42L)).isNull();
            assertThat(FencingContext.current("account", "s:42")).isNull(); // the colon is the resource's own
            assertThat(FencingContext.current("accounts:4", 2L)).isNull();
        }
    }

    @Test
    void textsOutsideLatin1MatchAsTheirBuiltTextWould() {
        FencingToken euro = new FencingToken("konto€:é", 1, "h");
        FencingToken latin = new FencingToken("konto:é", 2, "h");
        try (FencingScope ignored = FencingContext.bind(euro, latin)) {
            assertThat(FencingContext.current("konto€", "é")).isSameAs(euro);
            assertThat(FencingContext.current("konto", "é")).isSameAs(latin);
            assertThat(FencingContext.current("konto€", "e")).isNull();
            assertThat(FencingContext.current("konto", "e")).isNull();
            assertThat(FencingContext.current("konto€", 1L)).isNull();
        }
    }

    @Test
    void innerBindingsHideOuterOnesAndAnIsolatingScopeHidesEverythingBelow() {
        FencingToken outer = new FencingToken("orders:1", 1, "h");
        FencingToken inner = new FencingToken("orders:1", 2, "h");
        try (FencingScope o = FencingContext.bind(outer)) {
            try (FencingScope i = FencingContext.bind(inner)) {
                assertThat(FencingContext.current("orders", 1L)).isSameAs(inner);
            }
            try (FencingScope isolated = FencingContext.bindOnly(List.of(new FencingToken("other", 1, "h")))) {
                assertThat(FencingContext.current("orders", 1L)).isNull();
            }
            assertThat(FencingContext.current("orders", 1L)).isSameAs(outer);
        }
        assertThat(FencingContext.current("orders", 1L)).isNull();
    }

    @Test
    void aRepeatedLookupAnswersAsTheFirstDidAndAnyOtherKeyOrResourceIsMatchedAgain() {
        FencingToken a42 = new FencingToken("accounts:42", 7, "h");
        FencingToken a43 = new FencingToken("accounts:43", 8, "h");
        FencingToken big = new FencingToken("accounts:1000042", 9, "h");
        FencingToken o42 = new FencingToken("orders:42", 10, "h");
        try (FencingScope ignored = FencingContext.bind(a42, a43, big, o42)) {
            for (int round = 0; round < 3; round++) {
                assertThat(FencingContext.current("accounts", 42L)).isSameAs(a42);
                assertThat(FencingContext.current("accounts", 42L)).isSameAs(a42);
                assertThat(FencingContext.current("accounts", 43L)).isSameAs(a43);
                assertThat(FencingContext.current("orders", 42L)).isSameAs(o42);
                assertThat(FencingContext.current(new String("accounts"), 42L)).isSameAs(a42);
                assertThat(FencingContext.current(new String("orders"), 43L)).isNull();
                assertThat(FencingContext.current("accounts", 44L)).isNull();
                assertThat(FencingContext.current("accounts", 44L)).isNull();
                assertThat(FencingContext.current("accounts", "43")).isSameAs(a43);
                assertThat(FencingContext.current("accounts", new String("43"))).isSameAs(a43);
                assertThat(FencingContext.current("accounts", "42")).isSameAs(a42);
                assertThat(FencingContext.current("accounts", 42)).isSameAs(a42);
                // boxed anew on every call, as a proxy boxes a long argument beyond Long's cache
                assertThat(FencingContext.current("accounts", Long.valueOf(1_000_042L))).isSameAs(big);
                assertThat(FencingContext.current("accounts", Long.valueOf(1_000_042L))).isSameAs(big);
                assertThat(FencingContext.current("accounts", Long.valueOf(1_000_043L))).isNull();
            }
        }
    }

    @Test
    void whatAnOuterScopeRememberedNeverHidesAnInnerBinding() {
        FencingToken outer42 = new FencingToken("accounts:42", 1, "h");
        FencingToken inner42 = new FencingToken("accounts:42", 2, "h");
        FencingToken inner43 = new FencingToken("accounts:43", 3, "h");
        try (FencingScope o = FencingContext.bind(outer42)) {
            assertThat(FencingContext.current("accounts", 42L)).isSameAs(outer42);
            assertThat(FencingContext.current("accounts", 43L)).isNull();
            try (FencingScope i = FencingContext.bind(inner42, inner43)) {
                assertThat(FencingContext.current("accounts", 43L)).isSameAs(inner43);
                assertThat(FencingContext.current("accounts", 42L)).isSameAs(inner42);
                assertThat(FencingContext.current("accounts", 42L)).isSameAs(inner42);
            }
            assertThat(FencingContext.current("accounts", 42L)).isSameAs(outer42);
            assertThat(FencingContext.current("accounts", 43L)).isNull();
        }
    }

    /**
     * Random binds (plain, isolating, remote), closes and lookups, each lookup's answer compared with the lookup of
     * the built text, which remembers nothing: whatever a scope remembered must never change an answer.
     */
    @Test
    void whatScopesRememberNeverChangesAnAnswerOverRandomBindsClosesAndLookups() {
        SplittableRandom random = new SplittableRandom(20261203L);
        String[] resources = {"a", "b", "ab"};
        Deque<FencingScope> open = new ArrayDeque<>();
        try {
            for (int step = 0; step < 200_000; step++) {
                int action = random.nextInt(10);
                if (action == 0 && open.size() < 6) {
                    Map<String, FencingToken> tokens = new LinkedHashMap<>();
                    for (int n = random.nextInt(4); n > 0; n--) {
                        String resource = resources[random.nextInt(3)] + ":" + random.nextInt(4);
                        tokens.putIfAbsent(resource, new FencingToken(resource, 1 + random.nextInt(9), "h"));
                    }
                    List<FencingToken> bound = List.copyOf(tokens.values());
                    open.push(switch (random.nextInt(3)) {
                        case 0 -> FencingContext.bind(bound);
                        case 1 -> FencingContext.bindOnly(bound);
                        default -> FencingContext.bindRemote(bound);
                    });
                } else if (action == 1 && !open.isEmpty()) {
                    open.pop().close();
                } else {
                    String text = resources[random.nextInt(3)];
                    String resource = random.nextBoolean() ? text : new String(text);
                    int id = random.nextInt(4);
                    Object key = switch (random.nextInt(3)) {
                        case 0 -> (long) id;
                        case 1 -> id;
                        default -> String.valueOf(id);
                    };
                    assertThat(FencingContext.current(resource, key)).as("step %d: %s:%s", step, resource, key)
                            .isSameAs(FencingContext.current(resource + ":" + key));
                }
            }
        } finally {
            while (!open.isEmpty()) {
                open.pop().close();
            }
        }
    }

    @Test
    void aRepeatedLookupThatPresentsStillMarksTheAcquiredLock() {
        FencingToken token = new FencingToken("accounts:42", 1, "h");
        TokenUse use = new TokenUse();
        try (FencingScope ignored = FencingContext.bindAcquired(token, use)) {
            assertThat(FencingContext.current("accounts", 42L)).isSameAs(token);
            assertThat(FencingContext.current("accounts", 42L)).isSameAs(token);
            assertThat(use.isUsed()).isFalse();
            assertThat(FencingContext.present("accounts", 42L)).isSameAs(token);
            assertThat(use.isUsed()).isTrue();
        }
    }

    @Test
    void refusesAKeyOfAnotherTypeNamingTheResourceAndTheType() {
        assertThatThrownBy(() -> FencingContext.current("accounts", 4.2d))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'accounts'").hasMessageContaining("java.lang.Double");
        assertThatThrownBy(() -> FencingContext.current("accounts", (Object) null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("null");
    }

    @Test
    void numbersMatchTheirDecimalTextAtTheEdges() {
        long[] edges = {0, 1, -1, 9, 10, -10, 99, 100, Integer.MAX_VALUE, Integer.MIN_VALUE, Long.MAX_VALUE,
                Long.MIN_VALUE, Long.MIN_VALUE + 1, Long.MAX_VALUE - 1};
        for (long value : edges) {
            for (long candidate : edges) {
                assertThat(matches("r:" + candidate, "r", value))
                        .as("r:%d against key %d", candidate, value).isEqualTo(candidate == value);
            }
            assertThat(matches("r:0" + value, "r", value)).as("leading zero, %d", value).isFalse();
            assertThat(matches("r:+" + value, "r", value)).as("plus sign, %d", value).isFalse();
            assertThat(matches("r:" + value + " ", "r", value)).as("trailing space, %d", value)
                    .isFalse();
            assertThat(matches("r" + value, "r", value)).as("no colon, %d", value).isFalse();
        }
        assertThat(matches("r:-", "r", 0L)).isFalse();
        assertThat(matches("r:", "r", "")).isTrue(); // what the text would be (keys are never blank)
        assertThat(matches("r:", "r", "x")).isFalse();
        assertThat(matches("r:", "r", 0L)).isFalse();
    }

    @Test
    void aNumberMatchesItsOwnTextOnlyAtEveryMagnitude() {
        SplittableRandom random = new SplittableRandom(7);
        for (int n = 0; n < 100_000; n++) {
            long value = random.nextLong() >> random.nextInt(64); // every magnitude, both signs
            long other = random.nextBoolean() ? value + 1 - 2L * random.nextInt(2) : value * 10;
            assertThat(KeyedResources.endsWithDecimal("r:" + value, 2, value)).as("%d", value).isTrue();
            assertThat(KeyedResources.endsWithDecimal("r:" + other, 2, value)).as("%d against %d", other, value)
                    .isEqualTo(other == value);
            assertThat(KeyedResources.endsWithDecimal("r:" + value, 2, other)).as("%d against %d", value, other)
                    .isEqualTo(other == value);
        }
        for (String text : new String[] {"", "-", "-0", "00", "01", "+1", "1 ", " 1", "1a", "--1", "0-1",
                "0000000000000000001", "-0000000000000000001", "99999999999999999999"}) {
            for (long value : new long[] {0, 1, -1, 1000000000000000000L}) {
                assertThat(KeyedResources.endsWithDecimal("r:" + text, 2, value)).as("'%s' against %d", text, value)
                        .isFalse();
            }
        }
    }

    @Test
    void aNumberNeverMatchesAShorterOrLongerTextAndNeverReadsOutsideIt() {
        SplittableRandom random = new SplittableRandom(11);
        for (int n = 0; n < 100_000; n++) {
            long value = random.nextLong() >> random.nextInt(64);
            String resource = text(random, "ab:", random.nextInt(4));
            String own = resource + ':' + value;
            // every cut of the own text, and the own text with a character before or after it: only the own matches
            String cut = own.substring(0, random.nextInt(own.length() + 1));
            assertThat(matches(cut, resource, value)).as("'%s' against %s:%d", cut, resource, value)
                    .isEqualTo(cut.equals(own));
            assertThat(matches("x" + own, resource, value)).as("x%s", own).isFalse();
            // one character replaced, the length kept: the colon, a digit, the sign or a character of the resource
            char[] changed = own.toCharArray();
            int at = random.nextInt(changed.length);
            changed[at] = "ab:-0123456789".charAt(random.nextInt(14));
            String replaced = new String(changed);
            assertThat(matches(replaced, resource, value)).as("'%s' against %s:%d", replaced, resource, value)
                    .isEqualTo(replaced.equals(own));
            assertThat(matches(own + "0", resource, value)).as("%s0", own).isFalse();
            assertThat(matches(own, resource, value)).as(own).isTrue();
        }
        assertThat(matches("r11", "r", 1L)).as("no colon before the digits").isFalse();
        assertThat(matches("s:1", "r", 1L)).as("another resource of the same length").isFalse();
        for (String effective : new String[] {"", ":", "1", ":1", "r", "r:"}) {
            for (String resource : new String[] {"", "r", "rr:"}) {
                for (long value : new long[] {0, 1, -1, Long.MIN_VALUE}) {
                    assertThat(matches(effective, resource, value)).as("'%s' against %s:%d", effective, resource, value)
                            .isEqualTo(effective.equals(resource + ':' + value));
                }
            }
        }
    }

    @Test
    void agreesWithTheBuiltTextOnRandomResourcesAndKeys() {
        SplittableRandom random = new SplittableRandom(20261201L);
        String alphabet = "ab:1-0€";
        for (int n = 0; n < 200_000; n++) {
            String resource = text(random, alphabet, 1 + random.nextInt(4));
            String effective = text(random, alphabet, 1 + random.nextInt(9));
            Object key = switch (random.nextInt(3)) {
                case 0 -> text(random, alphabet, 1 + random.nextInt(4));
                case 1 -> random.nextBoolean() ? (long) random.nextInt(-1200, 1200)
                        : random.nextLong() >> random.nextInt(64);
                default -> random.nextInt(-1200, 1200);
            };
            boolean expected = effective.equals(resource + ":" + key);
            assertThat(matches(effective, resource, key))
                    .as("'%s' against '%s' + ':' + %s", effective, resource, key).isEqualTo(expected);
            // and once with the text it should match, which the random one rarely is
            assertThat(matches(resource + ":" + key, resource, key)).isTrue();
        }
    }

    @Test
    void aBoundResourceReadsAsANumberExactlyWhenItEndsWithTheTextLongToStringWrites() {
        SplittableRandom random = new SplittableRandom(7);
        long[] number = new long[1];
        for (int n = 0; n < 100_000; n++) {
            long value = random.nextLong() >> random.nextInt(64); // every magnitude, both signs
            number[0] = value + 1;
            assertThat(KeyedResources.numberAt("r:" + value, number, 0)).as("%d", value).isEqualTo(2);
            assertThat(number[0]).isEqualTo(value);
            assertThat(KeyedResources.numberAt("a:b:" + value, number, 0)).as("a:b:%d", value).isEqualTo(4);
        }
        for (long power = 1, i = 0; i < 19; i++, power *= 10) {
            for (long value : new long[] {power, power - 1, -power, 1 - power, Long.MAX_VALUE, Long.MIN_VALUE}) {
                assertThat(KeyedResources.numberAt("r:" + value, number, 0)).as("%d", value).isEqualTo(2);
                assertThat(number[0]).isEqualTo(value);
            }
        }
        String digits = "0123456789-+ a";
        for (int n = 0; n < 100_000; n++) {
            String text = text(random, digits, random.nextInt(22));
            number[0] = 12345;
            Long parsed = canonical(text);
            assertThat(KeyedResources.numberAt("r:" + text, number, 0)).as("'%s'", text)
                    .isEqualTo(parsed == null ? -1 : 2);
            assertThat(number[0]).as("'%s'", text).isEqualTo(parsed == null ? 12345 : parsed);
        }
        for (String text : new String[] {"", "-", "-0", "00", "01", "+1", "1 ", " 1", "1a", "--1", "0-1",
                "0000000000000000001", "-0000000000000000001", "9223372036854775808", "-9223372036854775809",
                "99999999999999999999"}) {
            assertThat(KeyedResources.numberAt("r:" + text, number, 0)).as("'%s'", text).isEqualTo(-1);
        }
        assertThat(KeyedResources.numberAt("r42", number, 0)).as("no colon").isEqualTo(-1);
        assertThat(KeyedResources.numberAt("r:42:x", number, 0)).as("a text after the number").isEqualTo(-1);
    }

    /** {@code text} as a long when it is exactly what {@link Long#toString(long)} writes for it, else {@code null}. */
    private static Long canonical(String text) {
        try {
            long value = Long.parseLong(text);
            return Long.toString(value).equals(text) ? value : null;
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /**
     * A scope asked for several entities compares numbers after its first keyed lookup: the tokens here share digits
     * and prefixes, each key is asked for first, among others and again, and every answer is the built text's.
     */
    @Test
    void aScopeAskedForManyEntitiesFindsEachByNumberAsByText() {
        FencingToken[] tokens = {new FencingToken("a:b:1", 1, "h"), new FencingToken("ab:1", 2, "h"),
            new FencingToken("a:1", 3, "h"), new FencingToken("a:10", 4, "h"), new FencingToken("b:1", 5, "h"),
            new FencingToken("a:x", 6, "h"), new FencingToken("a:-1", 7, "h"), new FencingToken("a:01", 8, "h")};
        String[] resources = {"a:b", "ab", "a", "b", "b:1", "", "a:"};
        Object[] keys = {1L, 10, -1L, 0L, 100L, 1, "1", "x", "b:1", "01", Long.MIN_VALUE};
        for (int first = 0; first < keys.length; first++) {
            try (FencingScope ignored = FencingContext.bind(tokens)) {
                for (int pass = 0; pass < 2; pass++) {
                    for (int k = 0; k < keys.length; k++) {
                        Object key = keys[(first + k) % keys.length];
                        for (String resource : resources) {
                            assertThat(FencingContext.current(resource, key)).as("%s:%s", resource, key)
                                    .isSameAs(FencingContext.current(resource + ":" + key));
                        }
                    }
                }
            }
        }
        try (FencingScope ignored = FencingContext.bind(tokens)) {
            assertThat(FencingContext.current("a", 1L)).isSameAs(tokens[2]);
            assertThat(FencingContext.current("a", 10L)).isSameAs(tokens[3]); // by number from here on
            assertThat(FencingContext.current("a:b", 1)).isSameAs(tokens[0]);
            assertThat(FencingContext.current("ab", 1L)).isSameAs(tokens[1]);
            assertThat(FencingContext.current("a", -1L)).isSameAs(tokens[6]);
            assertThat(FencingContext.current("a", 1L)).isSameAs(tokens[2]);
            assertThat(FencingContext.current("b", 1L)).isSameAs(tokens[4]);
            assertThat(FencingContext.current("a", 0L)).isNull();
        }
    }

    /**
     * The resource part a scope remembers per token is only ever one it compared and found: a resource that failed
     * the comparison, or one remembered for another token, never stands in for it.
     */
    @Test
    void aRememberedResourcePartNeverStandsInForAnother() {
        FencingToken a1 = new FencingToken("a:1", 1, "h");
        FencingToken b1 = new FencingToken("b:1", 2, "h");
        try (FencingScope ignored = FencingContext.bind(a1, b1)) {
            assertThat(FencingContext.current("x", 0L)).isNull(); // the first lookup; the next ones compare numbers
            assertThat(FencingContext.current("b", 1L)).isSameAs(b1);
            assertThat(FencingContext.current("c", 5L)).isNull();
            assertThat(FencingContext.current("b", 1L)).isSameAs(b1);
            assertThat(FencingContext.current("a", 1)).isSameAs(a1);
            assertThat(FencingContext.current("b", 1)).isSameAs(b1);
            assertThat(FencingContext.current("c", 1L)).isNull();
            assertThat(FencingContext.current("a", 1L)).isSameAs(a1);
            assertThat(FencingContext.current("b", 1L)).isSameAs(b1);
        }
    }

    /** What {@link FencingContext#current(String, Object)} asks of each bound token. */
    private static boolean matches(String effective, String resource, Object key) {
        return key instanceof String text
                ? KeyedResources.matches(effective, resource, text, resource.length() + 1 + text.length())
                : KeyedResources.matchesNumber(effective, resource, ((Number) key).longValue());
    }

    private static String text(SplittableRandom random, String alphabet, int length) {
        StringBuilder text = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            text.append(alphabet.charAt(random.nextInt(alphabet.length())));
        }
        return text.toString();
    }
}
