package dev.fencing.docs.retention;

import dev.fencing.boot.autoconfigure.FencingCompactionAutoConfiguration;
import dev.fencing.boot.autoconfigure.FencingCompactionSchedule;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.retention.CompactionRun;
import dev.fencing.store.InMemoryFenceStore;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.core.env.PropertiesPropertySource;
import org.springframework.core.io.ClassPathResource;
import org.springframework.core.io.support.PropertiesLoaderUtils;

import java.time.Duration;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

/** The compaction schedule docs/operations.md shows starts the starter's compaction as described. */
class CompactionPropertiesTest {

    @Test
    void theDocumentedScheduleStartsACompactionOfThirtyDaysAtHalfPastThree() throws Exception {
        Properties documented = PropertiesLoaderUtils.loadProperties(
                new ClassPathResource("dev/fencing/docs/retention/compaction.properties"));
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
            context.getEnvironment().getPropertySources().addFirst(new PropertiesPropertySource("docs", documented));
            context.registerBean(InMemoryFenceStore.class, () -> new InMemoryFenceStore());
            context.registerBean(InMemoryTokenIssuer.class, () -> new InMemoryTokenIssuer());
            context.register(FencingCompactionAutoConfiguration.class);
            context.refresh();
            assertThat(context.getBean(CompactionRun.class).idleFor()).isEqualTo(Duration.ofDays(30));
            assertThat(context.getBean(FencingCompactionSchedule.class)).hasToString("cron '0 30 3 * * *'");
            assertThat(context.getBean(FencingCompactionSchedule.class).isRunning()).isTrue();
        }
    }
}
