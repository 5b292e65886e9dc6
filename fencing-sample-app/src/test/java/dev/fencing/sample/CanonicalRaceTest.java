package dev.fencing.sample;

import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

class CanonicalRaceTest {

    @Test
    void theSampleBlocksTheZombieAndPrintsTheTrace() throws Exception {
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        CanonicalRace.Outcome outcome;
        try (var context = new AnnotationConfigApplicationContext(SampleConfiguration.class);
             PrintStream out = new PrintStream(buffer, true, StandardCharsets.UTF_8)) {
            outcome = new CanonicalRace(context, out).run();
        }
        String printed = buffer.toString(StandardCharsets.UTF_8);
        assertThat(outcome.client1Token()).isEqualTo(33);
        assertThat(outcome.client2Token()).isEqualTo(34);
        assertThat(outcome.data()).isEqualTo("X");
        assertThat(outcome.fenced()).isTrue();
        assertThat(printed).contains("t0", "token 33", "t3", "token 34", "ACCEPT, max_seen = 34", "t6",
                "33 <= 34 -> REJECT", "outcome=accepted} = 1", "outcome=stale}    = 1");
        assertThat(printed.indexOf("t4")).isLessThan(printed.indexOf("t6"));
    }
}
