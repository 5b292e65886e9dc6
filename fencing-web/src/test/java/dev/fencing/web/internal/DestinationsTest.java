package dev.fencing.web.internal;

import dev.fencing.FencingConfigurationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.URI;
import java.util.List;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Which entries name a destination: host or host:port only, anything that could never match refused up front. */
class DestinationsTest {

    @ParameterizedTest
    @ValueSource(strings = {"http://127.0.0.1:18081", "127.0.0.1:18081/internal", "ledger.internal?x=1",
            "user@ledger.internal", "", "  ", "ledger.internal#top", "https://ledger.internal", "127.0.0.1:99999",
            "127.0.0.1:0"})
    void anEntryThatCanNeverMatchIsRefusedNamingWhereTheValueAndTheForm(String entry) {
        assertThatThrownBy(() -> Destinations.check(List.of("ok.internal", entry), "fencing.web.client.propagate-to"))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("fencing.web.client.propagate-to entry '" + entry + "'")
                .hasMessageContaining("host:port");
    }

    @Test
    void handBuiltFiltersAreCheckedToo() {
        assertThatThrownBy(() -> Destinations.hosts(List.of("http://ledger.internal")))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("has a scheme");
    }

    @Test
    void hostAndHostPortEntriesAreAcceptedAndMatch() {
        Predicate<URI> allowed = Destinations.hosts(List.of("Ledger.internal", " 127.0.0.1:18081 ", "[::1]:8080"));
        assertThat(allowed.test(URI.create("http://ledger.internal:9000/x"))).isTrue();
        assertThat(allowed.test(URI.create("http://127.0.0.1:18081/internal/accounts"))).isTrue();
        assertThat(allowed.test(URI.create("http://127.0.0.1:18082/internal/accounts"))).isFalse();
    }
}
