package dev.fencing.boot.autoconfigure;

import org.springframework.aot.generate.GeneratedFiles;
import org.springframework.beans.factory.aot.BeanFactoryInitializationAotContribution;
import org.springframework.beans.factory.aot.BeanFactoryInitializationAotProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.env.Environment;
import org.springframework.core.io.ByteArrayResource;

import java.nio.charset.StandardCharsets;

/**
 * At AOT processing ({@code spring-boot:process-aot}): writes the decisions the starter's conditions took from the
 * build's {@code fencing.*} properties ({@link AotDecisions}) into the generated resources, for {@link FencingAotCheck}
 * to compare with the properties the application runs with. Registered in {@code META-INF/spring/aot.factories}.
 */
class FencingAotProcessor implements BeanFactoryInitializationAotProcessor {

    @Override
    public BeanFactoryInitializationAotContribution processAheadOfTime(ConfigurableListableBeanFactory beanFactory) {
        Environment environment = beanFactory.getBeanProvider(Environment.class).getIfUnique();
        if (environment == null) {
            return null;
        }
        byte[] decisions = AotDecisions.text(AotDecisions.of(environment)).getBytes(StandardCharsets.ISO_8859_1);
        // one file per application: a second context processed in the same build (a child) keeps the first's
        return (generationContext, code) -> generationContext.getGeneratedFiles().handleFile(
                GeneratedFiles.Kind.RESOURCE, AotDecisions.RESOURCE, file -> {
                    if (!file.exists()) {
                        file.create(new ByteArrayResource(decisions));
                    }
                });
    }
}
