package dev.fencing.it.weavingmeta;

import dev.fencing.spring.EnableFencing;
import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** An ASPECTJ context over {@link MetaLedger}; in a package of its own, as the other fault fixtures. */
@Configuration
@EnableFencing(mode = AdviceMode.ASPECTJ, allowInMemoryStore = true)
public class MetaConfig {
    @Bean
    MetaLedger metaLedger() {
        return new MetaLedger();
    }
}
