package dev.fencing.sample;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Debian's {@code prometheus} package on this machine: the {@code promtool} and {@code prometheus} binaries the alert
 * tests run. A missing binary fails the test with what to install ({@code .ci/run services} installs it); tests
 * install nothing and never skip.
 */
final class PrometheusTools {

    /** The alert rules and their promtool unit tests, from the module's directory. */
    static final Path RULES = Path.of("..", "docs", "prometheus", "fencing-alerts.yml");
    static final Path RULE_TESTS = Path.of("..", "docs", "prometheus", "fencing-alerts-test.yml");

    private PrometheusTools() {
    }

    /** The executable {@code name} in /usr/bin or /usr/local/bin. */
    static String binary(String name) {
        List<String> candidates = List.of("/usr/bin/" + name, "/usr/local/bin/" + name);
        for (String candidate : candidates) {
            if (new File(candidate).canExecute()) {
                return candidate;
            }
        }
        throw new IllegalStateException("The alert tests run Prometheus' own tools, and no " + name + " was found at "
                + String.join(" or ", candidates) + ". Install Debian's prometheus package first: run "
                + "'.ci/run services', or 'apt-get install --no-install-recommends prometheus'.");
    }

    /** Runs {@code promtool} with {@code args}; its exit code and its output (stdout and stderr together). */
    static Result promtool(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(binary("promtool"));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            byte[] output = process.getInputStream().readAllBytes();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException(String.join(" ", command) + " did not end within 30 s");
            }
            return new Result(process.exitValue(), new String(output, StandardCharsets.UTF_8));
        } finally {
            process.destroyForcibly();
        }
    }

    record Result(int exitCode, String output) {
    }
}
