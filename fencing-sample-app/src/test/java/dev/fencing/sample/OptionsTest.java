package dev.fencing.sample;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

class OptionsTest {

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) throws Throwable {
        return SampleApplication.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @Test
    void helpListsEveryOption() throws Throwable {
        assertThat(run("--help")).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("--help", "--lease-ms", "--zookeeper", "--etcd",
                "--redis", "--jdbc-url", "--jdbc-user", "--jdbc-password", "--serve", "--port", "--duration",
                "--no-zombie");
    }

    @Test
    void badOptionsExitWithTwoAndSayWhy() throws Throwable {
        assertThat(run("--frobnicate")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("unknown option '--frobnicate'").contains("usage:");
        err.reset();
        assertThat(run("--lease-ms", "soon")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("'--lease-ms' needs a number, was 'soon'");
        err.reset();
        assertThat(run("--zookeeper")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("'--zookeeper' needs a value");
        err.reset();
        assertThat(run("--jdbc-url", "jdbc:oracle:thin:@x")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("jdbc:postgresql:");
        assertThat(run("--port", "70000")).isEqualTo(2);
    }

    @Test
    void defaultsAreEmbedded() {
        Options options = Options.parse();
        assertThat(options.jdbcUrl()).isNull();
        assertThat(options.zookeeper()).isNull();
        assertThat(options.lease().toMillis()).isEqualTo(500);
        assertThat(options.port()).isEqualTo(9464);
        assertThat(options.zombie()).isTrue();
        assertThat(Options.parse("--serve", "--no-zombie").zombie()).isFalse();
    }
}
