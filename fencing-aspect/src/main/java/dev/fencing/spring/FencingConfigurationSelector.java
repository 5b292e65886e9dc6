package dev.fencing.spring;

import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.AdviceModeImportSelector;
import org.springframework.context.annotation.AutoProxyRegistrar;

/**
 * Imports the proxy or the AspectJ configuration according to {@link EnableFencing#mode()}; in PROXY mode also the
 * infrastructure auto-proxy creator (as {@code @EnableTransactionManagement} does), never a global one.
 */
public class FencingConfigurationSelector extends AdviceModeImportSelector<EnableFencing> {

    @Override
    protected String[] selectImports(AdviceMode adviceMode) {
        return switch (adviceMode) {
            case PROXY -> new String[] {AutoProxyRegistrar.class.getName(), ProxyFencingConfiguration.class.getName()};
            case ASPECTJ -> new String[] {AspectJFencingConfiguration.class.getName()};
        };
    }
}
