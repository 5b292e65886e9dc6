package dev.fencing.docs.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

class LeaderElectionConfigTest {

    @Test
    void theElectedLeaderPublishesWithItsTermsToken() throws Exception {
        try (var context = new AnnotationConfigApplicationContext()) {
            context.registerBean(TokenIssuer.class, InMemoryTokenIssuer::new);
            context.register(LeaderElectionConfig.class);
            context.refresh();
            assertThat(context.getBean(LockRegistryLeaderInitiator.class).isRunning()).isTrue();
            LeaderElectionConfig.ReportWriter writer = context.getBean(LeaderElectionConfig.ReportWriter.class);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (writer.term == null && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(writer.term).as("elected within 10 s").isNotNull();
            LeaderElectionConfig.Reports reports = context.getBean(LeaderElectionConfig.Reports.class);
            while (reports.published().isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(reports.published()).containsExactly("daily@1");
            writer.stopTerm();
            assertThatThrownBy(() -> writer.term.get(10, TimeUnit.SECONDS)).as("the term's work ends when stopped")
                    .hasCauseInstanceOf(InterruptedException.class);
        }
    }
}
