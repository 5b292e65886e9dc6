package dev.fencing.spring;

import dev.fencing.FencingConfigurationException;
import org.springframework.beans.factory.BeanClassLoaderAware;
import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.AdviceModeImportSelector;
import org.springframework.context.annotation.AutoProxyRegistrar;
import org.springframework.util.ClassUtils;

/**
 * Imports the proxy or the AspectJ configuration according to {@link EnableFencing#mode()}; in PROXY mode also the
 * infrastructure auto-proxy creator (as {@code @EnableTransactionManagement} does), never a global one. The
 * configurations are internal and named by class name: the AspectJ one lives in {@code fencing-aspect}, which this
 * module does not depend on (as Spring's {@code TransactionManagementConfigurationSelector} names
 * {@code AspectJTransactionManagementConfiguration} of spring-aspects); when it is missing, ASPECTJ mode fails with
 * the module to add.
 */
final class FencingConfigurationSelector extends AdviceModeImportSelector<EnableFencing>
        implements BeanClassLoaderAware {

    /** The beans both modes share: the fencing support and the startup validator. */
    static final String SUPPORT_CONFIGURATION = "dev.fencing.spring.support.FencingSupportConfiguration";
    /** PROXY mode: the shared beans and the advisor. */
    static final String PROXY_CONFIGURATION = "dev.fencing.spring.support.ProxyFencingConfiguration";
    /** ASPECTJ mode: configures the woven aspect; in fencing-aspect. */
    static final String ASPECTJ_CONFIGURATION = "dev.fencing.aspectj.AspectJFencingConfiguration";

    private ClassLoader classLoader;

    @Override
    public void setBeanClassLoader(ClassLoader classLoader) {
        this.classLoader = classLoader;
    }

    @Override
    protected String[] selectImports(AdviceMode adviceMode) {
        return switch (adviceMode) {
            case PROXY -> new String[] {AutoProxyRegistrar.class.getName(), PROXY_CONFIGURATION};
            case ASPECTJ -> {
                if (!ClassUtils.isPresent(ASPECTJ_CONFIGURATION, classLoader)) {
                    throw new FencingConfigurationException("@EnableFencing(mode = AdviceMode.ASPECTJ) needs the "
                            + "woven aspect, which is in the fencing-aspect module: add the dependency "
                            + "dev.fencing:fencing-aspect (and weave with it, at compile time as an aspect library or "
                            + "at load time with -javaagent:aspectjweaver.jar), or use PROXY mode, which needs "
                            + "fencing-spring only");
                }
                yield new String[] {SUPPORT_CONFIGURATION, ASPECTJ_CONFIGURATION};
            }
        };
    }
}
