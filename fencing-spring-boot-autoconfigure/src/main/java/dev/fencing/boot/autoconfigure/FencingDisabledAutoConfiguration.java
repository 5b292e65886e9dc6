package dev.fencing.boot.autoconfigure;

import dev.fencing.annotation.Fenced;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;

/**
 * With {@code fencing.enabled=false}: nothing but a warning at startup, since every {@code @Fenced} method then runs
 * unchecked, and a property left over in one profile must not switch the protection off unnoticed.
 */
@AutoConfiguration
@ConditionalOnClass(Fenced.class)
@ConditionalOnBooleanProperty(name = "fencing.enabled", havingValue = false)
public class FencingDisabledAutoConfiguration {

    static final String WARNING = "fencing.enabled=false: every @Fenced method runs unchecked (no token is checked "
            + "and no lock is taken); remove the property to turn fencing back on";

    /** Said instead when the application declares {@code @EnableFencing} itself, which still fences. */
    static final String OWN_ENABLE = "fencing.enabled=false turned the fencing starter off (its store, issuer and "
            + "checks of properties), but this application declares @EnableFencing itself, so its @Fenced methods are "
            + "still checked, with its own beans; remove that @EnableFencing too to run them unchecked";

    private static final Log log = LogFactory.getLog(FencingDisabledAutoConfiguration.class);

    FencingDisabledAutoConfiguration(org.springframework.beans.factory.ListableBeanFactory beans) {
        // an operator who switched fencing off in an incident must not be told it is off while it is not
        log.warn(beans.containsBeanDefinition(FencingAutoConfiguration.FENCING_SUPPORT_BEAN) ? OWN_ENABLE : WARNING);
    }
}
