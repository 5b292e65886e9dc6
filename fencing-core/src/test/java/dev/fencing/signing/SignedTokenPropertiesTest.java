package dev.fencing.signing;

import dev.fencing.token.FencingToken;
import dev.fencing.token.TokenFormatException;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a signature protects, over {@value #CASES} tokens and both schemes: no single-character change, truncation or
 * extension of a signed token's text gets through verification, a signature is bound to its key, resource, value and
 * holder, and rotation accepts both keys while they overlap and refuses the retired one after.
 *
 * <p>Plain JUnit, no property-testing library: jqwik 1.10 asks that AI coding agents not use it, and this project
 * respects its maintainer's wish.
 *
 * <p>The tokens are the edge cases first (value 1 and {@code Long.MAX_VALUE}, resources and holders of
 * {@link FencingToken#MAX_PART_LENGTH} chars, fully escaped, supplementary characters, separators), then random ones
 * from a {@link Random} with the fixed seed {@link #SEED}; every test's name and every assertion message carry the
 * seed and the case number, so a failure reproduces (another seed: {@code -Dsigning.seed=...}). The changes of a
 * token's text are enumerated, not sampled. Ed25519 verifications cost milliseconds on JDK 17, so the Ed25519 runs of
 * the exhaustive tests take fewer tokens than the HMAC ones; the parser's side of them is covered by HMAC.
 */
class SignedTokenPropertiesTest {

    static final long SEED = Long.decode(System.getProperty("signing.seed", "0x5EED5161"));

    static final int CASES = 200;

    /** How many of the cases are the fixed edge cases, the first ones. */
    static final int EDGES = 11;

    private static final List<Case> TOKENS = tokens(new Random(SEED));

    private static final Map<SignatureScheme, Keys.Pair> KEYS = keys("k1");
    private static final Map<SignatureScheme, Keys.Pair> SAME_ID = keys("k1");
    private static final Map<SignatureScheme, Keys.Pair> UNKNOWN = keys("k9");
    private static final Map<SignatureScheme, Keys.Pair> NEXT = keys("k2");

    /** One generated token, named by the seed and its number. */
    record Case(int index, FencingToken token) {

        String where() {
            return "seed " + SEED + ", case " + index + ": " + token.toText();
        }

        @Override
        public String toString() {
            String text = token.toText();
            return "seed " + SEED + " case " + index + " "
                    + (text.length() > 60 ? text.substring(0, 57) + "..." : text);
        }
    }

    // ---- no change of the text gets through -------------------------------------------------------------------

    /**
     * The edge cases of texts up to 600 chars (both parts at their longest, as characters left unescaped) and random
     * tokens of texts up to 300 chars, 24 in all: each costs ~100 parses per char of its text, and the fully escaped
     * longest parts (3,000 chars of text) took a minute alone on a loaded machine. Those are in the other tests.
     */
    static Stream<Case> singleCharacterHmac() {
        return TOKENS.stream().filter(c -> c.token().toText().length() <= (c.index() < EDGES ? 600 : 300)).limit(24);
    }

    @ParameterizedTest
    @MethodSource("singleCharacterHmac")
    @Timeout(90)
    void everySingleCharacterChangeIsRefusedHmac(Case c) {
        everySingleCharacterChangeIsRefused(c, SignatureScheme.HMAC_SHA256);
    }

    static Stream<Case> singleCharacterEd25519() {
        return TOKENS.stream().filter(c -> c.token().toText().length() <= 48).limit(8);
    }

    @ParameterizedTest
    @MethodSource("singleCharacterEd25519")
    @Timeout(90)
    void everySingleCharacterChangeIsRefusedEd25519(Case c) {
        everySingleCharacterChangeIsRefused(c, SignatureScheme.ED25519);
    }

    private static void everySingleCharacterChangeIsRefused(Case c, SignatureScheme scheme) {
        Keys.Pair keys = KEYS.get(scheme);
        TokenVerifier verifier = keys.verifier();
        String text = keys.signer().sign(c.token()).toText();
        assertThat(verifier.verify(FencingToken.parse(text))).as(c.where()).isEqualTo(Verification.VALID);
        int changes = 0;
        for (int i = 0; i < text.length(); i++) {
            for (char r : replacements(scheme, text.charAt(i))) {
                if (r != text.charAt(i)) {
                    assertRefused(text.substring(0, i) + r + text.substring(i + 1), verifier, c);
                    changes++;
                }
            }
        }
        assertThat(changes).as(c.where()).isGreaterThanOrEqualTo(text.length() * 3);
    }

    static Stream<Arguments> truncations() {
        return bothSchemes(CASES, 20);
    }

    @ParameterizedTest
    @MethodSource("truncations")
    @Timeout(30)
    void everyTruncationIsRefused(Case c, SignatureScheme scheme) {
        Keys.Pair keys = KEYS.get(scheme);
        TokenVerifier verifier = keys.verifier();
        String text = keys.signer().sign(c.token()).toText();
        assertThat(verifier.verify(FencingToken.parse(text))).as(c.where()).isEqualTo(Verification.VALID);
        for (int length = 0; length < text.length(); length++) {
            assertRefused(text.substring(0, length), verifier, c);
        }
    }

    static Stream<Arguments> extensions() {
        return bothSchemes(CASES, 6);
    }

    /**
     * Every character of the HMAC replacement set, appended and prepended, then random strings of 1 to 8 characters
     * (ASCII, Base64url, any character) from the case's own {@link Random}.
     */
    @ParameterizedTest
    @MethodSource("extensions")
    @Timeout(30)
    void everyExtensionIsRefused(Case c, SignatureScheme scheme) {
        Keys.Pair keys = KEYS.get(scheme);
        TokenVerifier verifier = keys.verifier();
        String text = keys.signer().sign(c.token()).toText();
        List<String> extras = new ArrayList<>();
        for (char r : replacements(SignatureScheme.HMAC_SHA256, ' ')) {
            extras.add(String.valueOf(r));
        }
        Random random = new Random(SEED + c.index());
        for (int i = 0; i < 24; i++) {
            extras.add(randomExtension(random));
        }
        for (String extra : extras) {
            assertRefused(text + extra, verifier, c);
            assertRefused(extra + text, verifier, c);
        }
    }

    // ---- a signature is bound to what it was made for -------------------------------------------------------------

    static Stream<Arguments> bindings() {
        return bothSchemes(CASES, 20);
    }

    /**
     * The signature moved onto another token's resource, value or holder (another generated token's, and one that
     * certainly differs: the first character replaced, the value one off).
     */
    @ParameterizedTest
    @MethodSource("bindings")
    @Timeout(30)
    void aSignatureIsBoundToItsResourceValueAndHolder(Case c, SignatureScheme scheme) {
        Keys.Pair keys = KEYS.get(scheme);
        TokenVerifier verifier = keys.verifier();
        FencingToken token = c.token();
        FencingToken signed = keys.signer().sign(token);
        FencingToken other = TOKENS.get(new Random(SEED ^ c.index()).nextInt(CASES)).token();
        long otherValue = token.value() == Long.MAX_VALUE ? token.value() - 1 : token.value() + 1;
        List<FencingToken> moved = List.of(
                new FencingToken(other.resource(), token.value(), token.holder(), signed.signature()),
                new FencingToken(token.resource(), other.value(), token.holder(), signed.signature()),
                new FencingToken(token.resource(), token.value(), other.holder(), signed.signature()),
                new FencingToken(changed(token.resource()), token.value(), token.holder(), signed.signature()),
                new FencingToken(token.resource(), otherValue, token.holder(), signed.signature()),
                new FencingToken(token.resource(), token.value(), changed(token.holder()), signed.signature()));
        int checked = 0;
        for (FencingToken candidate : moved) {
            if (!candidate.unsigned().equals(token)) {
                assertThat(verifier.verify(candidate)).as("%s moved to %s", c.where(), candidate.toText())
                        .isEqualTo(Verification.BAD_SIGNATURE);
                assertThat(verifier.verify(FencingToken.parse(candidate.toText())))
                        .as("%s moved to %s, parsed", c.where(), candidate.toText())
                        .isEqualTo(Verification.BAD_SIGNATURE);
                checked++;
            }
        }
        assertThat(checked).as(c.where()).isGreaterThanOrEqualTo(3);
        assertThat(verifier.verify(signed)).as(c.where()).isEqualTo(Verification.VALID);
    }

    static Stream<Arguments> schemePairs() {
        List<Arguments> out = new ArrayList<>();
        for (Case c : TOKENS.subList(0, 50)) {
            for (SignatureScheme scheme : SignatureScheme.values()) {
                for (SignatureScheme otherScheme : SignatureScheme.values()) {
                    out.add(Arguments.of(c, scheme, otherScheme));
                }
            }
        }
        return out.stream();
    }

    @ParameterizedTest
    @MethodSource("schemePairs")
    @Timeout(30)
    void anotherKeyWithTheSameIdAnUnknownKeyAndNoSignatureAreRefused(Case c, SignatureScheme scheme,
                                                                    SignatureScheme otherScheme) {
        TokenVerifier verifier = KEYS.get(scheme).verifier();
        FencingToken token = c.token();
        // another key under the same id (of either scheme): the signature does not match
        FencingToken sameId = SAME_ID.get(otherScheme).signer().sign(token);
        assertThat(sameId.signature().keyId()).isEqualTo("k1");
        assertThat(verifier.verify(sameId)).as(c.where()).isEqualTo(Verification.BAD_SIGNATURE);
        assertThat(verifier.verify(FencingToken.parse(sameId.toText()))).as(c.where())
                .isEqualTo(Verification.BAD_SIGNATURE);
        // a key id the ring does not know
        FencingToken unknown = UNKNOWN.get(otherScheme).signer().sign(token);
        assertThat(verifier.verify(unknown)).as(c.where()).isEqualTo(Verification.UNKNOWN_KEY);
        // no signature at all
        assertThat(verifier.verify(token)).as(c.where()).isEqualTo(Verification.UNSIGNED);
        assertThat(verifier.verify(FencingToken.parse(token.toText()))).as(c.where())
                .isEqualTo(Verification.UNSIGNED);
        // and the ring's own key is accepted
        assertThat(verifier.verify(KEYS.get(scheme).signer().sign(token))).as(c.where())
                .isEqualTo(Verification.VALID);
    }

    @ParameterizedTest
    @MethodSource("schemePairs")
    @Timeout(30)
    void rotationAcceptsBothKeysWhileTheyOverlapThenRefusesTheRetiredOne(Case c, SignatureScheme oldScheme,
                                                                         SignatureScheme newScheme) {
        Keys.Pair old = KEYS.get(oldScheme);
        Keys.Pair next = NEXT.get(newScheme);
        FencingToken byOld = old.signer().sign(c.token());
        FencingToken byNew = next.signer().sign(c.token());

        KeyRing before = KeyRing.of(old.key());
        assertThat(new TokenVerifier(before).verify(byNew)).as(c.where()).isEqualTo(Verification.UNKNOWN_KEY);

        KeyRing overlap = before.with(next.key());
        TokenVerifier during = new TokenVerifier(overlap);
        assertThat(during.verify(byOld)).as(c.where()).isEqualTo(Verification.VALID);
        assertThat(during.verify(byNew)).as(c.where()).isEqualTo(Verification.VALID);

        TokenVerifier after = new TokenVerifier(overlap.retire("k1"));
        assertThat(after.verify(byOld)).as(c.where()).isEqualTo(Verification.RETIRED_KEY);
        assertThat(after.verify(FencingToken.parse(byOld.toText()))).as(c.where())
                .isEqualTo(Verification.RETIRED_KEY);
        assertThat(after.verify(byNew)).as(c.where()).isEqualTo(Verification.VALID);
        assertThat(after.verify(FencingToken.parse(byNew.toText()))).as(c.where()).isEqualTo(Verification.VALID);
    }

    // ---- the text form ---------------------------------------------------------------------------------------------

    static Stream<Arguments> roundTrips() {
        return bothSchemes(CASES, CASES);
    }

    @ParameterizedTest
    @MethodSource("roundTrips")
    @Timeout(30)
    void textRoundTripsSignedAndUnsigned(Case c, SignatureScheme scheme) {
        FencingToken token = c.token();
        FencingToken signed = KEYS.get(scheme).signer().sign(token);
        assertThat(FencingToken.parse(signed.toText())).as(c.where()).isEqualTo(signed);
        assertThat(FencingToken.parse(signed.toText()).toText()).as(c.where()).isEqualTo(signed.toText());
        assertThat(FencingToken.parse(token.toText())).as(c.where()).isEqualTo(token);
        assertThat(signed.toText()).as(c.where()).startsWith(token.toText() + "!k1.");
        assertThat(signed.toText().length()).as(c.where()).isLessThanOrEqualTo(FencingToken.MAX_TEXT_LENGTH);
        assertThat(signed.unsigned()).as(c.where()).isEqualTo(token);
        assertThat(signed.isSigned()).as(c.where()).isTrue();
        assertThat(signed).as(c.where()).isNotEqualTo(token);
    }

    // ---- helpers ---------------------------------------------------------------------------------------------------

    private static void assertRefused(String text, TokenVerifier verifier, Case c) {
        FencingToken parsed;
        try {
            parsed = FencingToken.parse(text);
        } catch (TokenFormatException e) {
            return;
        }
        assertThat(verifier.verify(parsed)).as("%s: changed to '%s', which parsed and", c.where(), text)
                .isNotEqualTo(Verification.VALID);
    }

    /**
     * Replacements for one character. HMAC: every printable ASCII character, the controls and bytes that matter to the
     * parser (NUL, tab, DEL, 0x80, 0xFF), é, € and a lone surrogate. Ed25519 (a verification costs ~50x more): its
     * neighbours, its other case and a separator; the parser's side is covered by HMAC.
     */
    private static List<Character> replacements(SignatureScheme scheme, char original) {
        List<Character> out = new ArrayList<>();
        if (scheme == SignatureScheme.HMAC_SHA256) {
            for (char r = ' '; r < 0x7F; r++) {
                out.add(r);
            }
            for (char r : new char[]{0, '\t', 0x7F, 0x80, 0xE9, 0xFF, '\u20AC', '\uD83D'}) {
                out.add(r);
            }
            return out;
        }
        for (char r : new char[]{(char) (original - 1), (char) (original + 1), (char) (original ^ 0x20), '!'}) {
            out.add(r);
        }
        return out;
    }

    /** The first {@code hmac} cases with HMAC, then the first {@code ed25519} with Ed25519. */
    private static Stream<Arguments> bothSchemes(int hmac, int ed25519) {
        return Stream.concat(
                TOKENS.stream().limit(hmac).map(c -> Arguments.of(c, SignatureScheme.HMAC_SHA256)),
                TOKENS.stream().limit(ed25519).map(c -> Arguments.of(c, SignatureScheme.ED25519)));
    }

    private static Map<SignatureScheme, Keys.Pair> keys(String keyId) {
        Map<SignatureScheme, Keys.Pair> out = new EnumMap<>(SignatureScheme.class);
        for (SignatureScheme scheme : SignatureScheme.values()) {
            out.put(scheme, Keys.Pair.of(scheme, keyId));
        }
        return out;
    }

    /** {@code s} with its first character (code point) replaced: certainly different, still a valid part. */
    private static String changed(String s) {
        return (s.startsWith("x") ? "y" : "x") + s.substring(s.offsetByCodePoints(0, 1));
    }

    /** The edge cases, then random tokens up to {@link #CASES}. */
    private static List<Case> tokens(Random random) {
        int max = FencingToken.MAX_PART_LENGTH;
        String safe = "abcdefghijklmnopqrstuvwxyzABCXYZ0123456789-._~:/";
        List<FencingToken> edges = List.of(
                new FencingToken("a", 1, "h"),
                new FencingToken("accounts:42", Long.MAX_VALUE, "client-7"),
                new FencingToken(safe.repeat(6).substring(0, max), Long.MAX_VALUE, "x".repeat(max)),
                new FencingToken("\u20AC".repeat(max), 1, "\u00E9\u20AC\uD83D\uDE00\u5BA2"),
                new FencingToken("\uD83D\uDE00".repeat(max / 2), Long.MAX_VALUE, "\uD83D\uDE00".repeat(max / 2)),
                new FencingToken("#@!% /:~", 1L << 31, "!@#%\u00E9 "),
                new FencingToken("r", Long.MAX_VALUE - 1, "\u00E9"),
                new FencingToken("/locks/accounts:42", 2, "\u00DCn\u00EFc\u00F8d\u00E9-holder-\u00DF"),
                new FencingToken(" a", 10, " "),
                new FencingToken("\uD800\uDC00", 1, "\uDBFF\uDFFF"),
                new FencingToken("%", Integer.MAX_VALUE + 1L, "%41"));
        if (edges.size() != EDGES) {
            throw new IllegalStateException(edges.size() + " edge cases, EDGES says " + EDGES);
        }
        List<Case> out = new ArrayList<>();
        for (FencingToken edge : edges) {
            out.add(new Case(out.size(), edge));
        }
        while (out.size() < CASES) {
            String resource = randomPart(random, 24);
            if (resource.isBlank()) {
                resource = "r" + resource.substring(1);
            }
            out.add(new Case(out.size(), new FencingToken(resource, randomValue(random), randomPart(random, 16))));
        }
        return List.copyOf(out);
    }

    private static long randomValue(Random random) {
        return switch (random.nextInt(6)) {
            case 0 -> 1 + random.nextInt(1000);
            case 1 -> Long.MAX_VALUE;
            case 2 -> 1;
            case 3 -> 1L << random.nextInt(63);
            case 4 -> Long.MAX_VALUE - random.nextInt(1000);
            default -> Math.max(1, random.nextLong() & Long.MAX_VALUE);
        };
    }

    /** 1 to {@code usualMax} chars, one time in ten exactly {@link FencingToken#MAX_PART_LENGTH}. */
    private static String randomPart(Random random, int usualMax) {
        int length = random.nextInt(10) == 0 ? FencingToken.MAX_PART_LENGTH : 1 + random.nextInt(usualMax);
        StringBuilder out = new StringBuilder(length);
        while (out.length() < length) {
            int cp = randomCodePoint(random);
            if (out.length() + Character.charCount(cp) > length) {
                cp = 'z';
            }
            out.appendCodePoint(cp);
        }
        return out.toString();
    }

    /** Characters left as they are, escaped ASCII, Latin-1, the rest of the BMP and supplementary ones. */
    private static int randomCodePoint(Random random) {
        return switch (random.nextInt(6)) {
            case 0, 1 -> "abcz09AZ-._~:/".charAt(random.nextInt(14));
            case 2 -> " !\"#$%&'()*+,;<=>?@[\\]^`{|}".charAt(random.nextInt(27));
            case 3 -> 0xA0 + random.nextInt(0x60);
            case 4 -> 0x100 + random.nextInt(0xD800 - 0x100);
            default -> 0x10000 + random.nextInt(0x100000);
        };
    }

    private static String randomExtension(Random random) {
        int length = 1 + random.nextInt(8);
        StringBuilder out = new StringBuilder();
        int kind = random.nextInt(3);
        for (int i = 0; i < length; i++) {
            switch (kind) {
                case 0 -> out.append((char) (0x20 + random.nextInt(0x5F)));
                case 1 -> out.append("AQgw_-.!0".charAt(random.nextInt(9)));
                default -> out.append((char) random.nextInt(0x10000)); // any char, controls and surrogates included
            }
        }
        return out.toString();
    }
}
