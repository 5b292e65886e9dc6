package dev.fencing.boot.autoconfigure;

import dev.fencing.issuer.OffsetTokenIssuer;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * {@code fencing.issuer.offset.base}: the application's {@code TokenIssuer} bean (the starter's or its own) issues
 * its tokens plus the base, for a move from one issuer to another ({@link OffsetTokenIssuer}). The base is stored
 * once under {@code fencing.issuer.offset.name}; a base that is not positive, differs from the stored one, or (on the
 * first start) is not above the fence store's highest max_seen fails startup.
 */
@AutoConfiguration(before = FencingAutoConfiguration.class)
@ConditionalOnClass(OffsetTokenIssuer.class)
@ConditionalOnBooleanProperty(name = "fencing.enabled", matchIfMissing = true)
@ConditionalOnProperty(name = "fencing.issuer.offset.base")
public class FencingIssuerOffsetAutoConfiguration {

    @Bean
    static IssuerOffsetPostProcessor fencingIssuerOffsetPostProcessor() {
        return new IssuerOffsetPostProcessor();
    }
}
