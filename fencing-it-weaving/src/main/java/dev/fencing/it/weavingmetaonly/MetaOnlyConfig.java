package dev.fencing.it.weavingmetaonly;

import dev.fencing.spring.EnableFencing;
import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** An ASPECTJ context over {@link MetaOnlyLedger}, a bean, and {@link MetaOnlyService}, a class under its package. */
@Configuration
@EnableFencing(mode = AdviceMode.ASPECTJ, allowInMemoryStore = true)
public class MetaOnlyConfig {
    @Bean
    MetaOnlyLedger metaOnlyLedger() {
        return new MetaOnlyLedger();
    }
}
