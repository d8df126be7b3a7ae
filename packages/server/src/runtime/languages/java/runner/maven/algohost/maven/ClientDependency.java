package algohost.maven;

import org.apache.maven.AbstractMavenLifecycleParticipant;
import org.apache.maven.execution.MavenSession;
import org.apache.maven.model.Dependency;
import org.apache.maven.project.MavenProject;

/**
 * A Maven core extension the Java build loads with -Dmaven.ext.class.path: it adds the
 * in-algorithm client's jar (-Dalgohost.client.jar) to every module as a system-scoped
 * dependency, so that code using com.algorithmia compiles without a line in pom.xml (as Python's
 * `import Algorithmia` needs none). System scope needs no repository (the build is offline) and
 * stays out of target/lib: the runner puts the client on the class path itself. Registered in
 * META-INF/plexus/components.xml: Maven discovers components of -Dmaven.ext.class.path jars there.
 */
public class ClientDependency extends AbstractMavenLifecycleParticipant {
  @Override
  public void afterProjectsRead(MavenSession session) {
    String jar = session.getUserProperties().getProperty("algohost.client.jar", System.getProperty("algohost.client.jar"));
    if (jar == null || jar.isEmpty()) return;
    for (MavenProject project : session.getProjects()) {
      boolean declared = project.getDependencies().stream().anyMatch(d -> "com.algorithmia".equals(d.getGroupId()) && "algohost-client".equals(d.getArtifactId()));
      if (declared) continue;
      Dependency client = new Dependency();
      client.setGroupId("com.algorithmia");
      client.setArtifactId("algohost-client");
      client.setVersion("1.0.0");
      client.setScope("system");
      client.setSystemPath(jar);
      project.getModel().addDependency(client);
    }
  }
}
