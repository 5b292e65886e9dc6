package dev.fencing.web;

import dev.fencing.token.FencingToken;
import dev.fencing.token.TokenFormatException;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FencingHeaderTest {

    private final FencingToken a = new FencingToken("accounts:42", 34, "client-7");
    private final FencingToken b = new FencingToken("orders, east", 9, "lease@2");

    @Test
    void formatAndParseRoundTrip() {
        String value = FencingHeader.format(List.of(a, b));
        assertThat(value).isEqualTo("accounts:42#34@client-7, orders%2C%20east#9@lease%402");
        assertThat(FencingHeader.parse(List.of(value))).containsExactly(a, b);
    }

    @Test
    void entriesMaySpreadOverRepeatedFields() {
        assertThat(FencingHeader.parse(List.of(a.toText(), " " + b.toText() + " "))).containsExactly(a, b);
        assertThat(FencingHeader.parse(List.of())).isEmpty();
    }

    @Test
    void malformedHeadersAreErrorsNeverTokens() {
        assertThatThrownBy(() -> FencingHeader.parse(List.of("garbage"))).isInstanceOf(TokenFormatException.class);
        assertThatThrownBy(() -> FencingHeader.parse(List.of(a.toText() + ","))).hasMessageContaining("empty entry");
        assertThatThrownBy(() -> FencingHeader.parse(List.of(a.toText() + ", accounts:42#35@other")))
                .hasMessageContaining("two entries for resource 'accounts:42'");
        String many = String.join(",", java.util.stream.IntStream.range(0, 33)
                .mapToObj(i -> new FencingToken("r" + i, 1, "h").toText()).toList());
        assertThatThrownBy(() -> FencingHeader.parse(List.of(many))).hasMessageContaining("more than 32 entries");
        assertThatThrownBy(() -> FencingHeader.parse(List.of("x".repeat(FencingHeader.MAX_LENGTH + 1))))
                .hasMessageContaining("more than the " + FencingHeader.MAX_LENGTH);
    }
}
