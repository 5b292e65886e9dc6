package dev.fencing.token;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The one text form of several tokens that the HTTP and message headers share; errors name the carrier. */
class TokenListTest {

    private static final FencingToken A = new FencingToken("accounts:42", 34, "client-7");
    private static final FencingToken B = new FencingToken("ledger", 34, "client-7");

    @Test
    void formatsAndParsesBackOverSeveralFields() {
        assertThat(TokenList.format(List.of(A, B))).isEqualTo("accounts:42#34@client-7, ledger#34@client-7");
        assertThat(TokenList.format(List.of())).isEmpty();
        assertThat(TokenList.parse("Fencing-Token message header", Arrays.asList(A.toText(), null, " " + B.toText())))
                .containsExactly(A, B);
        assertThat(TokenList.parse("x", List.of())).isEmpty();
    }

    @Test
    void refusesWhatIsOverTheLimitsOrMalformedNamingTheCarrier() {
        String carrier = "Fencing-Token message header";
        String many = String.join(",", java.util.stream.IntStream.rangeClosed(0, TokenList.MAX_ENTRIES)
                .mapToObj(i -> "r" + i + "#1@p").toList());
        assertThatThrownBy(() -> TokenList.parse(carrier, List.of(many)))
                .hasMessage(carrier + " has more than " + TokenList.MAX_ENTRIES + " entries");
        assertThatThrownBy(() -> TokenList.parse(carrier, List.of("x".repeat(TokenList.MAX_LENGTH), "y")))
                .isInstanceOf(TokenFormatException.class).hasMessageStartingWith(carrier + " is 16385 characters long");
        assertThatThrownBy(() -> TokenList.parse(carrier, List.of(A.toText() + ", ")))
                .hasMessage(carrier + " has an empty entry (position 2)");
        assertThatThrownBy(() -> TokenList.parse(carrier, List.of(A.toText(), A.toText())))
                .hasMessage(carrier + " has two entries for resource 'accounts:42'");
        assertThatThrownBy(() -> TokenList.parse(carrier, List.of("accounts:42#x@p")))
                .isInstanceOf(TokenFormatException.class);
    }

    @Test
    @Timeout(10)
    void aDuplicateResourceIsNamedPrintably() {
        // a caller's resource with a right-to-left override: the 400 detail and the log show it escaped
        String entry = "pay%E2%80%AEevil#1@h";
        assertThatThrownBy(() -> TokenList.parse("Fencing-Token header", List.of(entry + ", " + entry)))
                .isInstanceOf(TokenFormatException.class).message()
                .contains("\\u202E").doesNotContain("\u202E");
    }
}
