name := "{{ALGO_NAME_LOWER}}"
organization := "algorithmia.{{ALGO_OWNER}}"
version := "1.0.0"
scalaVersion := "3.3.4"

// Add dependencies here, e.g.:
// libraryDependencies += "com.lihaoyi" %% "upickle" % "3.3.1"

// The service runs target/algorithm.jar (with the Scala library and the dependencies' jars beside it).
Compile / packageBin / artifactPath := target.value / "algorithm.jar"
