package dev.fencing.sample;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The shipped alert rules, checked by Prometheus' own tool: {@code promtool check rules} accepts the file, and
 * {@code promtool test rules} runs its unit tests (each alert fires on a series that should fire it and stays quiet
 * on one that should not). A failure shows promtool's output.
 */
class AlertRulesTest {

    @Test
    void promtoolAcceptsTheRulesFile() throws Exception {
        PrometheusTools.Result result = PrometheusTools.promtool("check", "rules", PrometheusTools.RULES.toString());
        assertThat(result.exitCode()).as("promtool check rules said:%n%s", result.output()).isZero();
        assertThat(result.output()).contains("SUCCESS: 9 rules found");
    }

    @Test
    void everyAlertPassesItsUnitTests() throws Exception {
        PrometheusTools.Result result = PrometheusTools.promtool("test", "rules",
                PrometheusTools.RULE_TESTS.toString());
        assertThat(result.exitCode()).as("promtool test rules said:%n%s", result.output()).isZero();
        assertThat(result.output()).contains("SUCCESS");
    }

    @Test
    void aMissingBinaryFailsSayingWhatToInstall() {
        assertThatThrownBy(() -> PrometheusTools.binary("promtool-that-is-not-installed"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("/usr/bin/promtool-that-is-not-installed")
                .hasMessageContaining(".ci/run services")
                .hasMessageContaining("apt-get install --no-install-recommends prometheus");
    }
}
